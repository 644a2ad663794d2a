// File operations glibc declares only under _GNU_SOURCE, or in headers the Swift Glibc module
// does not import (sys/xattr.h). Static inline so the module needs no extra objects.
#ifndef INBOX_FILES_H
#define INBOX_FILES_H

#include <errno.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

// open(2): O_PATH pins an inode without opening the file itself (value for every Linux arch but a few).
#define INBOX_O_PATH 010000000
// renameat2(2): fail with EEXIST instead of replacing the target.
#define INBOX_RENAME_NOREPLACE 1U
// fcntl(2) leases, declared by glibc only under _GNU_SOURCE.
#define INBOX_F_SETLEASE 1024
#define INBOX_F_GETLEASE 1025

static inline int inbox_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                                  unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

// statx(2) with STATX_MNT_ID (Linux 5.8): the id of the mount an open file is reached through, which tells two
// bind mounts of one filesystem apart (st_dev does not). The kernel's struct statx (linux/stat.h): glibc 2.36's has
// no stx_mnt_id. -1 with errno ENOSYS or EINVAL where the kernel cannot say.
static inline int inbox_mount_id(int fd, unsigned long long *id) {
    struct statx st;
    if (syscall(SYS_statx, fd, "", 0x1000 /* AT_EMPTY_PATH */, STATX_MNT_ID, &st) != 0) return -1;
    if (!(st.stx_mask & STATX_MNT_ID)) {
        errno = EINVAL;
        return -1;
    }
    *id = st.stx_mnt_id;
    return 0;
}

// openat2(2) (Linux 5.6), which glibc 2.36 does not wrap: -1 with errno ENOSYS on an older kernel.
static inline int inbox_openat2(int dirfd, const char *path, int flags, unsigned long long resolve) {
    struct open_how how = {.flags = (unsigned long long)(unsigned int)flags, .mode = 0, .resolve = resolve};
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}
#define INBOX_RESOLVE_NO_XDEV RESOLVE_NO_XDEV
#define INBOX_RESOLVE_NO_MAGICLINKS RESOLVE_NO_MAGICLINKS
#define INBOX_RESOLVE_NO_SYMLINKS RESOLVE_NO_SYMLINKS
#define INBOX_RESOLVE_BENEATH RESOLVE_BENEATH
#define INBOX_RESOLVE_IN_ROOT RESOLVE_IN_ROOT
// fchownat(2) on the descriptor itself (an O_PATH one included), declared by glibc only under _GNU_SOURCE.
#define INBOX_AT_EMPTY_PATH 0x1000

// statx(2) of an open file for what tells a mount apart: whether it is the root of a mount (STATX_ATTR_MOUNT_ROOT,
// Linux 5.8; *is_root -1 where the kernel cannot say) and the mount's id (*id 0 where it cannot say).
static inline int inbox_mount_status(int fd, unsigned long long *id, int *is_root) {
    struct statx st;
    if (syscall(SYS_statx, fd, "", 0x1000 /* AT_EMPTY_PATH */, STATX_MNT_ID, &st) != 0) return -1;
    *id = (st.stx_mask & STATX_MNT_ID) ? st.stx_mnt_id : 0;
    *is_root = (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ? ((st.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0) : -1;
    return 0;
}

// prctl(2) is variadic: Swift cannot call it. Orphaned descendants of our handlers become our children.
static inline int inbox_set_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL); }

// pipe2(2), declared by glibc only under _GNU_SOURCE.
static inline int inbox_pipe2(int fds[2], int flags) { return (int)syscall(SYS_pipe2, fds, flags); }

static inline ssize_t inbox_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return fgetxattr(fd, name, value, size);
}

static inline int inbox_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

// By path, never following a final symlink: for a file in a directory of the agent's own, without opening it.
static inline int inbox_lsetxattr(const char *path, const char *name, const void *value, size_t size) {
    return lsetxattr(path, name, value, size, 0);
}

static inline int inbox_fremovexattr(int fd, const char *name) { return fremovexattr(fd, name); }

static inline ssize_t inbox_flistxattr(int fd, char *list, size_t size) { return flistxattr(fd, list, size); }

#endif
