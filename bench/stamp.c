// The benchmark handler: writes "<name> <CLOCK_MONOTONIC ns>" to $STAMP_LOG the moment it starts.
// $STAMP_LOG is a FIFO the benchmark reads (latency) or a regular file opened for appending (bursts).
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const char *log = getenv("STAMP_LOG");
    const char *name = getenv("INBOX_NAME");
    if (!log) return 64;
    if (!name) name = argc > 1 ? argv[1] : "?";
    char line[512];
    int n = snprintf(line, sizeof line, "%s %lld\n", name, (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return 65;
    // One write of less than PIPE_BUF: atomic on a FIFO and with O_APPEND.
    if (write(fd, line, (size_t)n) != n) return 66;
    close(fd);
    return 0;
}
