// Landlock (landlock(7)): glibc has no wrappers, and Debian's <linux/landlock.h> stops at ABI 2,
// so the structures and the rights of later ABIs are defined here, with the kernel's values.
#ifndef INBOX_LANDLOCK_H
#define INBOX_LANDLOCK_H

#include <stdint.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif

// The kernel takes the size of what the caller passes: an older kernel accepts a shorter prefix.
struct inbox_landlock_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;  // ABI 4
    uint64_t scoped;              // ABI 6
};

struct inbox_landlock_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define INBOX_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define INBOX_LANDLOCK_RULE_PATH_BENEATH 1

// Filesystem rights: ABI 1 up to MAKE_SYM, REFER in ABI 2, TRUNCATE in ABI 3, IOCTL_DEV in ABI 5.
#define INBOX_LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define INBOX_LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define INBOX_LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define INBOX_LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define INBOX_LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define INBOX_LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define INBOX_LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#define INBOX_LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#define INBOX_LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#define INBOX_LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)

// Scopes (ABI 6): a sandboxed process may not signal processes outside its domain.
#define INBOX_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define INBOX_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

static inline int inbox_landlock_create_ruleset(const struct inbox_landlock_ruleset_attr *attr, size_t size,
                                                uint32_t flags) {
    return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

// Restricts the calling thread (and what it starts) to the ruleset; no_new_privs first, as landlock(7) requires
// of an unprivileged caller.
static inline int inbox_landlock_restrict_self(int ruleset_fd) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) return -1;
    return (int)syscall(SYS_landlock_restrict_self, ruleset_fd, 0U);
}

static inline int inbox_landlock_add_path_rule(int ruleset_fd, const struct inbox_landlock_path_beneath_attr *attr) {
    return (int)syscall(SYS_landlock_add_rule, ruleset_fd, INBOX_LANDLOCK_RULE_PATH_BENEATH, attr, 0U);
}

#endif
