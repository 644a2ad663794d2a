// What inboxd is measured against: plain posix_spawn(3) of the same handler, with no intake,
// typing, moving, sandbox or journal.
//   spawn-baseline latency N HANDLER       N sequential spawns; prints each spawn-to-start latency in ns
//   spawn-baseline throughput N WORKERS HANDLER   N spawns, WORKERS at a time; prints the rate
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "latency") == 0) {
        int n = atoi(argv[2]);
        // The handler writes its start time to $STAMP_LOG, a FIFO we hold open for reading.
        const char *fifo = getenv("STAMP_LOG");
        if (!fifo) return 64;
        FILE *in = fopen(fifo, "r+");
        if (!in) return 65;
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "b%d", i);
            char *args[] = {argv[3], name, NULL};
            long long t0 = now_ns();
            pid_t pid;
            if (posix_spawn(&pid, argv[3], NULL, NULL, args, environ) != 0) return 66;
            char line[256];
            if (!fgets(line, sizeof line, in)) return 67;
            long long started = atoll(strchr(line, ' ') + 1);
            int status;
            waitpid(pid, &status, 0);
            printf("%lld\n", started - t0);
        }
        return 0;
    }
    if (argc >= 5 && strcmp(argv[1], "throughput") == 0) {
        int n = atoi(argv[2]), workers = atoi(argv[3]);
        char *args[] = {argv[4], NULL};
        long long t0 = now_ns();
        int started = 0, running = 0;
        while (started < n || running > 0) {
            while (running < workers && started < n) {
                pid_t pid;
                if (posix_spawn(&pid, argv[4], NULL, NULL, args, environ) != 0) return 66;
                started++;
                running++;
            }
            int status;
            if (wait(&status) > 0) running--;
        }
        double seconds = (now_ns() - t0) / 1e9;
        printf("%.1f\n", n / seconds);
        return 0;
    }
    fprintf(stderr, "usage: spawn-baseline latency N HANDLER | throughput N WORKERS HANDLER\n");
    return 2;
}
