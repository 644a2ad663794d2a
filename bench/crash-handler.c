// The crash trials' handler (bench/crash-trials): as fast as /bin/true, but it takes an exclusive lock named after
// its file for as long as it runs and appends "<name> <attempt> <redelivered>" to $CRASH_LOG. A lock already held
// means another process works on the same file at the same time: it appends the name to $CRASH_OVERLAPS. A lock
// goes with its holder (flock(2)), so one left by a killed handler never counts. $CRASH_HOLD_US keeps the lock that
// long after the log line, so that a handler an agent's crash left running would be caught by the redelivery.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static int append(const char *path, const char *line, size_t length) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return -1;
    // One write of less than PIPE_BUF with O_APPEND: never interleaved with another handler's.
    ssize_t written = write(fd, line, length);
    close(fd);
    return written == (ssize_t)length ? 0 : -1;
}

int main(void) {
    const char *name = getenv("INBOX_NAME"), *log = getenv("CRASH_LOG"), *overlaps = getenv("CRASH_OVERLAPS");
    const char *locks = getenv("CRASH_LOCKS"), *hold = getenv("CRASH_HOLD_US");
    const char *attempt = getenv("INBOX_ATTEMPT"), *redelivered = getenv("INBOX_REDELIVERED");
    if (!name || !log || !overlaps || !locks || strchr(name, '/')) return 64;
    char line[512];
    int n = snprintf(line, sizeof line, "%s/%s", locks, name);
    if (n < 0 || (size_t)n >= sizeof line) return 64;
    int lock = open(line, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0) return 65;
    if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
        n = snprintf(line, sizeof line, "%s\n", name);
        append(overlaps, line, (size_t)n);
        flock(lock, LOCK_EX);
    }
    n = snprintf(line, sizeof line, "%s %s %s\n", name, attempt ? attempt : "?", redelivered ? redelivered : "0");
    if (n < 0 || (size_t)n >= sizeof line || append(log, line, (size_t)n) != 0) return 66;
    long us = hold ? atol(hold) : 0;
    if (us > 0) {
        struct timespec pause = { us / 1000000, (us % 1000000) * 1000 };
        nanosleep(&pause, NULL);
    }
    return 0;
}
