// The per-file filesystem work of inboxd's intake (the calls `strace -f` shows per file, with the same flags: the
// O_PATH pin and its /proc/self/fd reopen, the attribute listing, the sidecar looked for, the read lease, the move
// by inode through intake/ with its check, the delivery record, owner and mode, the lease checked), done three ways
// over N empty files: inline on one thread; on a worker thread fed in batches by the thread that plays the event
// loop; and in batches through io_uring (io_uring_setup/io_uring_enter, no liburing), one submission per step of a
// batch, the calls that are no io_uring operation (fcntl, flistxattr, fchown, fchmod) made directly. REST_US is the
// rest of the agent's CPU per file (typing, routing, dispatch, the message, the journal), spun on the loop thread:
// inline after each file, with the worker while it moves the next batch. Prints files/s and the CPU per file of the
// process (every thread, io_uring's io-wq workers included) and of the loop thread. docs/design.md, "One thread,
// and what a file costs it", has the figures.
//   gcc -O2 -Wall -o intake-move bench/intake-move.c -lpthread
//   intake-move DIR N inline|thread|uring [BATCH [REST_US]]     (as root: the owner change as the agent makes it)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int inbox, staging, target, n, batch = 32, rest_us = 0;
// The rest of the agent's work per file (typing, routing, dispatch, the message, the journal): CPU, spun.
static void rest(int files) { if (!rest_us) return; struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    double end = t.tv_sec + t.tv_nsec / 1e9 + files * rest_us / 1e6;
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); while (t.tv_sec + t.tv_nsec / 1e9 < end); }
static char (*names)[32];

static void fail(const char *what) { perror(what); exit(1); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(int who) { struct rusage r; getrusage(who, &r);
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6; }

// One file, as the agent does it today (IntakeWatcher.take, ArrivalReader, Router.place, Directory.relocate).
static void move_one(int i) {
    const char *name = names[i];
    int pinned = openat(inbox, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (pinned < 0) fail("openat");
    struct stat st, check;
    fstat(pinned, &st);
    char proc[64]; snprintf(proc, sizeof proc, "/proc/self/fd/%d", pinned);
    int fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    fstat(fd, &check);
    close(pinned);
    flistxattr(fd, NULL, 0);
    char sidecar[48]; snprintf(sidecar, sizeof sidecar, ".%s.inbox-meta", name);
    openat(inbox, sidecar, O_PATH | O_NOFOLLOW | O_CLOEXEC);  // ENOENT
    fcntl(fd, F_SETLEASE, F_RDLCK);
    char staged[48]; snprintf(staged, sizeof staged, "%lu-%lu", (unsigned long)st.st_dev, (unsigned long)st.st_ino);
    if (renameat2(inbox, name, staging, staged, RENAME_NOREPLACE) != 0) fail("renameat2");
    fstatat(staging, staged, &check, AT_SYMLINK_NOFOLLOW);
    flistxattr(fd, NULL, 0);
    fsetxattr(fd, "user.inboxd.delivery", "0123456789abcdef0123456789abcdef 0 f.txt", 41, 0);
    if (geteuid() == 0) fchown(fd, 0, 65534);
    fchmod(fd, 0440);
    if (renameat2(staging, staged, target, name, RENAME_NOREPLACE) != 0) fail("renameat2 on");
    fcntl(fd, F_GETLEASE);
    fstat(fd, &check);
    close(fd);
}

// ---- a worker thread fed in batches: the event loop posts [from, to) and is woken by an eventfd per batch done ----
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t posted = PTHREAD_COND_INITIALIZER;
static int posted_to, done_fd;
static void *worker(void *unused) {
    (void)unused;
    int next = 0;
    while (next < n) {
        pthread_mutex_lock(&lock);
        while (posted_to == next) pthread_cond_wait(&posted, &lock);
        int to = posted_to;
        pthread_mutex_unlock(&lock);
        for (int i = next; i < to; i++) move_one(i);
        uint64_t one = to - next;
        write(done_fd, &one, 8);
        next = to;
    }
    return NULL;
}

// ---- io_uring: raw setup, one submission of a batch per step whose calls are io_uring operations ----
static int ring_fd; static unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes; static struct io_uring_cqe *cqes; static unsigned sq_local;
static void ring_setup(unsigned entries) {
    struct io_uring_params p; memset(&p, 0, sizeof p);
    ring_fd = syscall(__NR_io_uring_setup, entries, &p);
    if (ring_fd < 0) fail("io_uring_setup");
    size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(0, sq_size > cq_size ? sq_size : cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQ_RING);
    char *cq = sq;  // IORING_FEAT_SINGLE_MMAP
    sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQES);
    sq_tail = (unsigned *)(sq + p.sq_off.tail); sq_mask = (unsigned *)(sq + p.sq_off.ring_mask); sq_array = (unsigned *)(sq + p.sq_off.array);
    cq_head = (unsigned *)(cq + p.cq_off.head); cq_tail = (unsigned *)(cq + p.cq_off.tail); cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    sq_local = *sq_tail;
}
static struct io_uring_sqe *sqe(uint64_t data) {
    unsigned index = sq_local & *sq_mask;
    struct io_uring_sqe *e = &sqes[index]; memset(e, 0, sizeof *e);
    sq_array[index] = index; e->user_data = data; sq_local++;
    return e;
}
// Submits what was queued and waits for all of it; results by user_data (the slot in the batch).
static void ring_run(unsigned count, int *results) {
    __atomic_store_n(sq_tail, sq_local, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, ring_fd, count, count, IORING_ENTER_GETEVENTS, NULL, 0) < 0) fail("io_uring_enter");
    unsigned head = *cq_head, seen = 0;
    while (seen < count) {
        unsigned tail = __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE);
        while (head != tail) { struct io_uring_cqe *c = &cqes[head & *cq_mask]; results[c->user_data] = c->res; head++; seen++; }
        __atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
        if (seen < count && syscall(__NR_io_uring_enter, ring_fd, 0, count - seen, IORING_ENTER_GETEVENTS, NULL, 0) < 0) fail("enter");
    }
}
static void move_batch_uring(int from, int to) {
    int k = to - from, pinned[64], fd[64], res[128];
    struct statx sx[64]; char proc[64][32], sidecar[64][48], staged[64][48];
    for (int j = 0; j < k; j++) {  // the pinning opens and the sidecar probes
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_OPENAT; e->fd = inbox; e->addr = (uintptr_t)names[from + j];
        e->open_flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
        snprintf(sidecar[j], 48, ".%s.inbox-meta", names[from + j]);
        e = sqe(k + j); e->opcode = IORING_OP_OPENAT; e->fd = inbox; e->addr = (uintptr_t)sidecar[j]; e->open_flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    }
    ring_run(2 * k, res);
    for (int j = 0; j < k; j++) {
        pinned[j] = res[j];
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_STATX; e->fd = pinned[j]; e->addr = (uintptr_t)"";
        e->statx_flags = AT_EMPTY_PATH; e->len = STATX_BASIC_STATS; e->off = (uintptr_t)&sx[j];
    }
    ring_run(k, res);
    for (int j = 0; j < k; j++) {
        snprintf(proc[j], 32, "/proc/self/fd/%d", pinned[j]);
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_OPENAT; e->fd = AT_FDCWD; e->addr = (uintptr_t)proc[j];
        e->open_flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    }
    ring_run(k, res);
    for (int j = 0; j < k; j++) {
        fd[j] = res[j];
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_STATX; e->fd = fd[j]; e->addr = (uintptr_t)"";
        e->statx_flags = AT_EMPTY_PATH; e->len = STATX_BASIC_STATS; e->off = (uintptr_t)&sx[j];
        e = sqe(k + j); e->opcode = IORING_OP_CLOSE; e->fd = pinned[j];
    }
    ring_run(2 * k, res);
    for (int j = 0; j < k; j++) {  // no io_uring operation for these
        flistxattr(fd[j], NULL, 0);
        fcntl(fd[j], F_SETLEASE, F_RDLCK);
        snprintf(staged[j], 48, "%u-%llu", sx[j].stx_dev_major, (unsigned long long)sx[j].stx_ino);
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_RENAMEAT; e->fd = inbox; e->addr = (uintptr_t)names[from + j];
        e->len = staging; e->addr2 = (uintptr_t)staged[j]; e->rename_flags = RENAME_NOREPLACE;
    }
    ring_run(k, res);
    for (int j = 0; j < k; j++) {
        if (res[j] != 0) { errno = -res[j]; fail("renameat"); }
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_STATX; e->fd = staging; e->addr = (uintptr_t)staged[j];
        e->statx_flags = AT_SYMLINK_NOFOLLOW; e->len = STATX_BASIC_STATS; e->off = (uintptr_t)&sx[j];
    }
    ring_run(k, res);
    static const char value[] = "0123456789abcdef0123456789abcdef 0 f.txt";
    for (int j = 0; j < k; j++) {
        flistxattr(fd[j], NULL, 0);
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_FSETXATTR; e->fd = fd[j]; e->addr = (uintptr_t)"user.inboxd.delivery";
        e->addr2 = (uintptr_t)value; e->len = 41;
    }
    ring_run(k, res);
    for (int j = 0; j < k; j++) {
        if (geteuid() == 0) fchown(fd[j], 0, 65534);
        fchmod(fd[j], 0440);
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_RENAMEAT; e->fd = staging; e->addr = (uintptr_t)staged[j];
        e->len = target; e->addr2 = (uintptr_t)names[from + j]; e->rename_flags = RENAME_NOREPLACE;
    }
    ring_run(k, res);
    for (int j = 0; j < k; j++) {
        fcntl(fd[j], F_GETLEASE);
        struct io_uring_sqe *e = sqe(j); e->opcode = IORING_OP_STATX; e->fd = fd[j]; e->addr = (uintptr_t)"";
        e->statx_flags = AT_EMPTY_PATH; e->len = STATX_BASIC_STATS; e->off = (uintptr_t)&sx[j];
        e = sqe(k + j); e->opcode = IORING_OP_CLOSE; e->fd = fd[j];
    }
    ring_run(2 * k, res);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: intake-move DIR N inline|thread|uring [BATCH [REST_US]]\n"); return 2; }
    n = atoi(argv[2]); if (argc > 4) batch = atoi(argv[4]); if (argc > 5) rest_us = atoi(argv[5]);
    if (batch > 64) batch = 64;
    char path[4096];
    snprintf(path, sizeof path, "rm -rf %s/inbox %s/intake %s/target && mkdir -p %s/inbox %s/intake %s/target", argv[1], argv[1], argv[1], argv[1], argv[1], argv[1]);
    if (system(path) != 0) return 1;
    snprintf(path, sizeof path, "%s/inbox", argv[1]); inbox = open(path, O_PATH | O_DIRECTORY);
    snprintf(path, sizeof path, "%s/intake", argv[1]); staging = open(path, O_PATH | O_DIRECTORY);
    snprintf(path, sizeof path, "%s/target", argv[1]); target = open(path, O_PATH | O_DIRECTORY);
    names = calloc(n, 32);
    for (int i = 0; i < n; i++) { snprintf(names[i], 32, "f%d.txt", i); close(openat(inbox, names[i], O_CREAT | O_WRONLY, 0644)); }
    double t0 = now(), c0 = cpu(RUSAGE_SELF), m0 = cpu(RUSAGE_THREAD);
    if (!strcmp(argv[3], "inline")) {
        for (int i = 0; i < n; i++) { move_one(i); rest(1); }
    } else if (!strcmp(argv[3], "thread")) {
        done_fd = eventfd(0, 0);
        pthread_t t; pthread_create(&t, NULL, worker, NULL);
        int done = 0;
        for (int from = 0; from < n; from += batch) {
            pthread_mutex_lock(&lock); posted_to = from + batch < n ? from + batch : n; pthread_cond_signal(&posted); pthread_mutex_unlock(&lock);
            rest(posted_to - from);  // the loop types and dispatches while the worker moves
            while (done < posted_to - batch) { uint64_t count; read(done_fd, &count, 8); done += count; }  // one batch ahead
        }
        while (done < n) { uint64_t count; read(done_fd, &count, 8); done += count; }
        pthread_join(t, NULL);
    } else if (!strcmp(argv[3], "uring")) {
        ring_setup(128);
        for (int from = 0; from < n; from += batch) { move_batch_uring(from, from + batch < n ? from + batch : n); rest(from + batch < n ? batch : n - from); }
    } else { fprintf(stderr, "unknown mode\n"); return 2; }
    double t1 = now(), c1 = cpu(RUSAGE_SELF), m1 = cpu(RUSAGE_THREAD);
    printf("%s batch %d rest %d us: %.0f files/s, CPU per file: process %.1f us, calling thread %.1f us\n", argv[3], batch, rest_us,
           n / (t1 - t0), (c1 - c0) * 1e6 / n, (m1 - m0) * 1e6 / n);
    return 0;
}
