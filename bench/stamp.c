// The benchmark handler: writes "<name> <CLOCK_MONOTONIC ns>" to its log the moment it starts.
// The log is a FIFO the benchmark reads (latency) or a regular file opened for appending (bursts).
//   stamp [NAME [LOG]]      one file: the name is $INBOX_NAME (as inboxd launches it), else NAME
//                           (as the posix_spawn baselines, incrond and the inotifywait loop do);
//                           the log is LOG, else $STAMP_LOG
//   stamp --batch FILE...   one process for many files (Exec=... %F): one line per FILE, its
//                           base name, the same start time and this process's pid, to $STAMP_LOG
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int append(const char *log, const char *text, size_t length) {
    int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return 65;
    // One write: atomic on a FIFO below PIPE_BUF, and with O_APPEND on a regular file.
    if (write(fd, text, length) != (ssize_t)length) return 66;
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long started = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    if (argc > 1 && strcmp(argv[1], "--batch") == 0) {
        const char *log = getenv("STAMP_LOG");
        if (!log) return 64;
        size_t capacity = 64, length = 0;
        for (int i = 2; i < argc; i++) capacity += strlen(argv[i]) + 48;
        char *lines = malloc(capacity);
        if (!lines) return 67;
        for (int i = 2; i < argc; i++) {
            const char *slash = strrchr(argv[i], '/');
            length += (size_t)snprintf(lines + length, capacity - length, "%s %lld %d\n",
                                       slash ? slash + 1 : argv[i], started, (int)getpid());
        }
        return argc > 2 ? append(log, lines, length) : 0;
    }
    const char *log = argc > 2 ? argv[2] : getenv("STAMP_LOG");
    const char *name = getenv("INBOX_NAME");
    if (!log) return 64;
    if (!name) name = argc > 1 ? argv[1] : "?";
    char line[512];
    int n = snprintf(line, sizeof line, "%s %lld\n", name, started);
    return append(log, line, (size_t)n);
}
