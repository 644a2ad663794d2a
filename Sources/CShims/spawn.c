// The child side of spawning: clone(2) with CLONE_VM | CLONE_VFORK | CLONE_PIDFD, like glibc's posix_spawn,
// then a short list of raw syscalls and execve(2). No Swift code runs in the child.
//
// Rules for everything reachable from child_main: the child shares our address space (CLONE_VM) until it
// execs, so it must not malloc, take a lock, or run any handler of ours; it may only call async-signal-safe
// functions and raw syscalls. glibc's setuid/setgid/setgroups wrappers are out: they broadcast the change to
// every thread glibc knows about (SIGSETXID, see nptl(7)), which here are the parent's threads.
// Man pages: clone(2), close_range(2), pidfd_open(2), prlimit(2), landlock(7), PR_SET_PDEATHSIG in prctl(2).
#define _GNU_SOURCE
#include "inbox_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD  // an enum constant in glibc >= 2.36, so this #define only takes effect with older headers
#define P_PIDFD 3
#endif
// Same numbers on every architecture (new syscalls share one table); Debian's headers may predate them.
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
// On 32-bit x86 and arm the plain id syscalls take 16-bit ids; glibc uses the *32 variants there too.
#ifdef SYS_setresuid32
#define INBOX_SYS_SETRESUID SYS_setresuid32
#define INBOX_SYS_SETRESGID SYS_setresgid32
#define INBOX_SYS_GETRESUID SYS_getresuid32
#define INBOX_SYS_SETGROUPS SYS_setgroups32
#else
#define INBOX_SYS_SETRESUID SYS_setresuid
#define INBOX_SYS_SETRESGID SYS_setresgid
#define INBOX_SYS_GETRESUID SYS_getresuid
#define INBOX_SYS_SETGROUPS SYS_setgroups
#endif

// The child uses a few hundred bytes of stack; glibc's posix_spawn gets by with a similar fixed size.
#define CHILD_STACK_SIZE (64 * 1024)
// rt_sig* syscalls take the kernel's 64-signal mask (8 bytes), not glibc's 128-byte sigset_t.
#define KERNEL_SIGSET_SIZE 8
#define KERNEL_NSIG 64

// Reports a failed step through the shared request and exits. The parent reads the fields once clone returns.
static _Noreturn void child_fail(struct inbox_spawn_request *req, int step) {
    req->failed_errno = errno;
    req->failed_step = step;
    _exit(127);
}

// Moves an fd that sits among the placed ones (0..placed-1, and is not already where it belongs) above them, so a
// dup2 onto 0..placed-1 cannot overwrite it before it is used. The child has its own copy of the fd table (no
// CLONE_FILES).
static int move_above_placed(struct inbox_spawn_request *req, int fd, int wanted, int placed) {
    if (fd < 0 || fd >= placed || fd == wanted) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, placed);
    if (moved < 0) child_fail(req, INBOX_SPAWN_STEP_FCNTL);
    return moved;
}

static int child_main(void *arg) {
    struct inbox_spawn_request *req = arg;

    // Every signal is blocked (inherited from inbox_spawn). Before anything can unblock them, reset every
    // handler, ignored ones included (SIG_IGN survives execve): a handler here would be the parent's code
    // running on the parent's memory. The handler table is our own copy (no CLONE_SIGHAND).
    // An all-zero kernel sigaction is SIG_DFL with no flags and an empty mask in every architecture's layout.
    unsigned long default_action[4] = { 0, 0, 0, 0 };
    for (int sig = 1; sig <= KERNEL_NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        if (syscall(SYS_rt_sigaction, sig, default_action, NULL, KERNEL_SIGSET_SIZE) != 0)
            child_fail(req, INBOX_SPAWN_STEP_SIGACTION);
    }

    if (syscall(SYS_setsid) < 0) child_fail(req, INBOX_SPAWN_STEP_SETSID);

    // The fds that are placed: 0, 1, 2, and 3 for socket activation (sd_listen_fds(3) starts there).
    int placed = req->listen_fd >= 0 ? 4 : 3;
    int sources[4] = { req->stdin_fd, req->stdout_fd, req->stderr_fd, req->listen_fd };
    for (int i = 0; i < placed; i++) sources[i] = move_above_placed(req, sources[i], i, placed);
    int ruleset = move_above_placed(req, req->landlock_ruleset_fd, -1, placed);
    for (int i = 0; i < placed; i++) {
        if (sources[i] == i) {
            // dup2(fd, fd) is a no-op that would leave close-on-exec set.
            if (fcntl(i, F_SETFD, 0) < 0) child_fail(req, INBOX_SPAWN_STEP_FCNTL);
        } else if (dup2(sources[i], i) < 0) {
            child_fail(req, INBOX_SPAWN_STEP_DUP2);
        }
    }

    // Close everything else, including fds another thread opened without O_CLOEXEC. The Landlock ruleset
    // stays open across this: landlock_restrict_self must come after PR_SET_NO_NEW_PRIVS, which comes after
    // the credential change, so the ruleset is closed by hand right after it is applied.
    if (ruleset >= 0) {
        if (ruleset > placed && syscall(SYS_close_range, (unsigned)placed, (unsigned)ruleset - 1, 0U) < 0)
            child_fail(req, INBOX_SPAWN_STEP_CLOSE_RANGE);
        if (syscall(SYS_close_range, (unsigned)ruleset + 1, ~0U, 0U) < 0)
            child_fail(req, INBOX_SPAWN_STEP_CLOSE_RANGE);
    } else if (syscall(SYS_close_range, (unsigned)placed, ~0U, 0U) < 0) {
        child_fail(req, INBOX_SPAWN_STEP_CLOSE_RANGE);
    }

    // LISTEN_PID= names the process that may take the fds (sd_listen_fds(3)): only the child knows its pid before
    // execve. The string lies in the parent's memory, which the child shares until execve (CLONE_VM), and the
    // parent, suspended (CLONE_VFORK), reads it no more.
    if (req->listen_pid_digits != NULL) {
        char digits[24];
        int count = 0;
        for (unsigned long pid = (unsigned long)syscall(SYS_getpid); count == 0 || pid > 0; pid /= 10)
            digits[count++] = (char)('0' + pid % 10);
        for (int i = 0; i < count; i++) req->listen_pid_digits[i] = digits[count - 1 - i];
        req->listen_pid_digits[count] = '\0';
    }

    umask(req->umask);

    // Before the credential change, as systemd does: only a privileged agent may raise a hard limit, and
    // setresuid keeps rlimits as they are, so they still hold for the new user. It also means the
    // RLIMIT_NPROC that setresuid checks for the new user (PF_NPROC_EXCEEDED, then EAGAIN from execve) is
    // the handler's own. Limits belong to the process, not the memory (no CLONE_THREAD), so none of this
    // touches the agent; and the child neither opens fds nor maps memory from here on, so a RLIMIT_NOFILE or
    // RLIMIT_AS below what the agent already uses first bites after execve, in the handler.
    for (int i = 0; i < req->nrlimits; i++) {
        unsigned long long limit[2] = { req->rlimits[i].soft, req->rlimits[i].hard };
        if (syscall(SYS_prlimit64, 0, req->rlimits[i].resource, limit, NULL) < 0)
            child_fail(req, INBOX_SPAWN_STEP_PRLIMIT);
    }

    if (req->ngroups >= 0 && syscall(INBOX_SYS_SETGROUPS, (size_t)req->ngroups, req->groups) < 0)
        child_fail(req, INBOX_SPAWN_STEP_SETGROUPS);
    if (req->gid != (gid_t)-1 && syscall(INBOX_SYS_SETRESGID, req->gid, req->gid, req->gid) < 0)
        child_fail(req, INBOX_SPAWN_STEP_SETRESGID);
    if (req->uid != (uid_t)-1) {
        int was_root = geteuid() == 0;
        if (syscall(INBOX_SYS_SETRESUID, req->uid, req->uid, req->uid) < 0)
            child_fail(req, INBOX_SPAWN_STEP_SETRESUID);
        if (was_root && req->uid != 0) {
            // Belt and braces, as systemd does: all three ids changed, and root cannot be taken back.
            uid_t r, e, s;
            if (syscall(INBOX_SYS_GETRESUID, &r, &e, &s) < 0) child_fail(req, INBOX_SPAWN_STEP_VERIFY_CREDENTIALS);
            if (r != req->uid || e != req->uid || s != req->uid || syscall(INBOX_SYS_SETRESUID, 0, 0, 0) == 0) {
                errno = EPERM;
                child_fail(req, INBOX_SPAWN_STEP_VERIFY_CREDENTIALS);
            }
        }
    }

    // After the credential change, like systemd: the directory may only be reachable as the target user
    // (root-squashed NFS), and a directory the user cannot enter should fail here, not in the handler.
    if (req->cwd != NULL && chdir(req->cwd) < 0) child_fail(req, INBOX_SPAWN_STEP_CHDIR);

    if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) child_fail(req, INBOX_SPAWN_STEP_NO_NEW_PRIVS);

    if (ruleset >= 0) {
        if (syscall(SYS_landlock_restrict_self, ruleset, 0U) < 0) child_fail(req, INBOX_SPAWN_STEP_LANDLOCK);
        close(ruleset);
    }

    // Last of the settings: the kernel clears the parent-death signal whenever the euid or egid changes.
    if (req->parent_death_signal != 0) {
        if (syscall(SYS_prctl, PR_SET_PDEATHSIG, (unsigned long)req->parent_death_signal, 0UL, 0UL, 0UL) < 0)
            child_fail(req, INBOX_SPAWN_STEP_PDEATHSIG);
        // If the parent died before the prctl, nobody will ever send the signal.
        if (getppid() != req->parent_pid) {
            errno = ESRCH;
            child_fail(req, INBOX_SPAWN_STEP_PDEATHSIG);
        }
    }

    // Only now may signals arrive; each has its default action, so a pending SIGTERM simply ends the child.
    uint64_t empty = 0;
    if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, KERNEL_SIGSET_SIZE) < 0)
        child_fail(req, INBOX_SPAWN_STEP_SIGPROCMASK);

    execve(req->path, req->argv, req->envp);
    child_fail(req, INBOX_SPAWN_STEP_EXECVE);
}

int inbox_spawn(struct inbox_spawn_request *req, int *pidfd_out, pid_t *pid_out) {
    req->failed_step = INBOX_SPAWN_OK;
    req->failed_errno = 0;
    if (req->nrlimits < 0 || req->nrlimits > INBOX_SPAWN_MAX_RLIMITS) {
        req->failed_step = INBOX_SPAWN_STEP_PRLIMIT;
        req->failed_errno = EINVAL;
        return -1;
    }
    // Only the parent-death check needs it; getpid is a real syscall in current glibc.
    req->parent_pid = req->parent_death_signal ? getpid() : 0;

    // One stack per spawning thread, kept for its lifetime: the thread is suspended while its child uses the
    // stack (CLONE_VFORK), so reuse is safe, and it saves an mmap and a munmap on every launch.
    static __thread void *stack;
    if (!stack) {
        void *mapped = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                            -1, 0);
        if (mapped == MAP_FAILED) {
            req->failed_step = INBOX_SPAWN_STEP_MMAP;
            req->failed_errno = errno;
            return -1;
        }
        stack = mapped;
    }

    // Block every signal in this thread, glibc's internal SIGCANCEL and SIGSETXID included (pthread_sigmask
    // would quietly leave those two out), so no handler runs in the child while it shares our memory.
    uint64_t all = ~(uint64_t)0, saved;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, KERNEL_SIGSET_SIZE);

    // CLONE_VFORK suspends this thread until the child execs or exits, so the child can report a failed
    // step and errno by writing into *req: this replaces the style guide's close-on-exec error pipe and
    // saves its pipe2, read and two closes on every launch.
    int pidfd = -1;
    pid_t pid = clone(child_main, (char *)stack + CHILD_STACK_SIZE,
                      CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, req, &pidfd);
    int clone_errno = errno;

    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, KERNEL_SIGSET_SIZE);

    if (pid < 0) {
        req->failed_step = INBOX_SPAWN_STEP_CLONE;
        req->failed_errno = clone_errno;
        return -1;
    }
    if (req->failed_step != INBOX_SPAWN_OK) {
        // The child has called _exit(127): reap it so no zombie is left behind.
        siginfo_t info;
        while (waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED) < 0 && errno == EINTR) {}
        close(pidfd);
        return -1;
    }
    *pidfd_out = pidfd;
    *pid_out = pid;
    return 0;
}

const char *inbox_spawn_step_name(int step) {
    switch (step) {
    case INBOX_SPAWN_OK: return "none";
    case INBOX_SPAWN_STEP_MMAP: return "mmap";
    case INBOX_SPAWN_STEP_CLONE: return "clone";
    case INBOX_SPAWN_STEP_SIGACTION: return "rt_sigaction";
    case INBOX_SPAWN_STEP_SETSID: return "setsid";
    case INBOX_SPAWN_STEP_FCNTL: return "fcntl";
    case INBOX_SPAWN_STEP_DUP2: return "dup2";
    case INBOX_SPAWN_STEP_CLOSE_RANGE: return "close_range";
    case INBOX_SPAWN_STEP_PRLIMIT: return "prlimit64";
    case INBOX_SPAWN_STEP_CHDIR: return "chdir";
    case INBOX_SPAWN_STEP_SETGROUPS: return "setgroups";
    case INBOX_SPAWN_STEP_SETRESGID: return "setresgid";
    case INBOX_SPAWN_STEP_SETRESUID: return "setresuid";
    case INBOX_SPAWN_STEP_VERIFY_CREDENTIALS: return "verify-credentials";
    case INBOX_SPAWN_STEP_NO_NEW_PRIVS: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case INBOX_SPAWN_STEP_LANDLOCK: return "landlock_restrict_self";
    case INBOX_SPAWN_STEP_PDEATHSIG: return "prctl(PR_SET_PDEATHSIG)";
    case INBOX_SPAWN_STEP_SIGPROCMASK: return "rt_sigprocmask";
    case INBOX_SPAWN_STEP_EXECVE: return "execve";
    default: return "unknown";
    }
}

int inbox_pidfd_send_signal(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0U);
}

int inbox_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0U);
}

int inbox_memfd_create(const char *name, unsigned int flags) {
    return memfd_create(name, flags);
}

int inbox_waitid_pidfd(int pidfd, int *code, int *status, int options) {
    siginfo_t info;
    info.si_pid = 0;  // stays 0 when WNOHANG finds the child still running (waitid(2))
    if (waitid(P_PIDFD, (id_t)pidfd, &info, options) < 0) return -1;
    *code = info.si_pid == 0 ? 0 : info.si_code;
    *status = info.si_pid == 0 ? 0 : info.si_status;
    return 0;
}
