// The resident benchmark handler (Activation=resident): takes its deliveries from fd 3, a connected
// SOCK_SEQPACKET socket (LISTEN_FDS=1), and for each writes "<name> <CLOCK_MONOTONIC ns> <pid>" to
// $STAMP_LOG the moment recvmsg(2) returned it, closes the descriptor that came with it and answers
// {"deliveryID": "...", "result": "done"}. A message without a descriptor is logged as "!nofd <name>"
// and still answered. Exits at EOF (the agent closed the socket).
//
// Started without that socket (an agent that does not know Activation=resident launches it for
// each file like any handler) it writes "!launched <reason>" and exits 0, so that bench.py can say
// the agent under test does not support resident handlers instead of measuring something else.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MESSAGE_MAX = 256 * 1024, FDS_MAX = 8 };

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// The string value of "key" in a flat JSON object, copied into out (escapes kept as they are:
// the benchmark's names and ids have none). Empty when the key is missing.
static void json_string(const char *json, size_t length, const char *key, char *out, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    out[0] = 0;
    const char *end = json + length, *p = memmem(json, length, pattern, strlen(pattern));
    if (!p) return;
    p += strlen(pattern);
    while (p < end && (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n')) p++;
    if (p >= end || *p != '"') return;
    p++;
    size_t n = 0;
    while (p < end && *p != '"' && n + 1 < size) {
        if (*p == '\\' && p + 1 < end) out[n++] = *p++;
        out[n++] = *p++;
    }
    out[n] = 0;
}

static int log_line(int log, const char *line) {
    size_t length = strlen(line);
    return write(log, line, length) == (ssize_t)length ? 0 : -1;
}

int main(void) {
    const char *path = getenv("STAMP_LOG");
    if (!path) return 64;
    int log = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (log < 0) return 65;
    char line[1024];
    const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
    int type = 0;
    socklen_t type_length = sizeof type;
    const char *problem = NULL;
    if (!fds || strcmp(fds, "1") != 0) problem = "LISTEN_FDS is not 1";
    else if (!pid || atoi(pid) != (int)getpid()) problem = "LISTEN_PID is not this process";
    else if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &type_length) != 0) problem = "fd 3 is not a socket";
    else if (type != SOCK_SEQPACKET) problem = "fd 3 is not SOCK_SEQPACKET";
    if (problem) {
        snprintf(line, sizeof line, "!launched %s\n", problem);
        log_line(log, line);
        return 0;
    }
    static char message[MESSAGE_MAX];
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(int) * FDS_MAX)];
    } control;
    for (;;) {
        struct iovec iov = {message, sizeof message};
        struct msghdr header = {.msg_iov = &iov, .msg_iovlen = 1,
                                .msg_control = control.space, .msg_controllen = sizeof control.space};
        ssize_t n = recvmsg(3, &header, MSG_CMSG_CLOEXEC);
        long long received = now_ns();
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return 70;
        if (n == 0) return 0;  // EOF: the agent asks us to exit
        int attached = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < count; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                close(fd);
                attached++;
            }
        }
        char name[256], id[128];
        json_string(message, (size_t)n, "name", name, sizeof name);
        json_string(message, (size_t)n, "deliveryID", id, sizeof id);
        if (header.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
            snprintf(line, sizeof line, "!truncated %s\n", name);
        else if (attached != 1)
            snprintf(line, sizeof line, "!nofd %s %d\n", name, attached);
        else
            snprintf(line, sizeof line, "%s %lld %d\n", name, received, (int)getpid());
        if (log_line(log, line) != 0) return 66;
        char answer[256];
        int length = snprintf(answer, sizeof answer, "{\"deliveryID\": \"%s\", \"result\": \"done\"}", id);
        if (send(3, answer, (size_t)length, MSG_NOSIGNAL) < 0) return errno == EPIPE ? 0 : 71;
    }
}
