// Unix sockets with one passed descriptor (SCM_RIGHTS): the CMSG_* macros that build and walk the control
// message are macros, which Swift cannot use. Static inline so the module needs no extra objects.
// Man pages: unix(7) (SOCK_SEQPACKET, SCM_RIGHTS), sendmsg(2), recvmsg(2), cmsg(3).
#ifndef INBOX_SOCKET_H
#define INBOX_SOCKET_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

/// socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC): both ends close-on-exec, message boundaries kept.
static inline int inbox_seqpacket_pair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

/// Sends one message with `fd` attached when it is >= 0. MSG_NOSIGNAL: a peer that went away is EPIPE, not a
/// SIGPIPE; `flags` adds MSG_DONTWAIT for a caller that must not block. Returns sendmsg's result.
static inline ssize_t inbox_send_with_fd(int socket, const void *bytes, size_t count, int fd, int flags) {
    struct iovec vector = { .iov_base = (void *)bytes, .iov_len = count };
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1 };
    if (fd >= 0) {
        message.msg_control = control.space;
        message.msg_controllen = sizeof control.space;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    return sendmsg(socket, &message, MSG_NOSIGNAL | flags);
}

/// The flags of `inbox_send_with_fd` and `inbox_receive_with_fd`, which Swift sees only as enum members.
#define INBOX_MSG_DONTWAIT 0x40

/// Receives one message into `bytes` (up to `capacity`). The first descriptor attached lands in `*fd`
/// (close-on-exec), -1 when there is none; any further descriptors are closed, so a peer cannot make the caller
/// hold descriptors it did not ask for. `*truncated` is set when the message or its control data did not fit
/// (MSG_TRUNC, MSG_CTRUNC). Returns recvmsg's result: 0 is end of file.
static inline ssize_t inbox_receive_with_fd(int socket, void *bytes, size_t capacity, int *fd, int *truncated,
                                            int flags) {
    struct iovec vector = { .iov_base = bytes, .iov_len = capacity };
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * 8)];
    } control;
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space,
                              .msg_controllen = sizeof control.space };
    *fd = -1;
    *truncated = 0;
    ssize_t count = recvmsg(socket, &message, MSG_CMSG_CLOEXEC | flags);
    if (count < 0) return count;
    *truncated = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int received;
            memcpy(&received, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*fd < 0) *fd = received; else close(received);
        }
    }
    return count;
}

#endif
