// The child side of spawning, where no Swift code may run, and the process calls Swift cannot make directly:
// variadic syscall(2) and functions glibc declares only under _GNU_SOURCE.
// CShims has no umbrella header: every header in include/ is part of the module, one per facility.
#ifndef INBOX_SPAWN_H
#define INBOX_SPAWN_H

#include <sys/resource.h>
#include <sys/types.h>

// memfd_create(2) flags; MFD_NOEXEC_SEAL (Linux 6.3) is newer than Debian's headers.
#define INBOX_MFD_CLOEXEC 0x0001U
#define INBOX_MFD_ALLOW_SEALING 0x0002U
#define INBOX_MFD_NOEXEC_SEAL 0x0008U

// fcntl(2) file seals, hidden behind _GNU_SOURCE in glibc.
#define INBOX_F_ADD_SEALS 1033
#define INBOX_F_SEAL_SEAL 0x0001
#define INBOX_F_SEAL_SHRINK 0x0002
#define INBOX_F_SEAL_GROW 0x0004
#define INBOX_F_SEAL_WRITE 0x0008

// si_code values of a SIGCHLD siginfo (siginfo.h). Swift's Glibc module exports CLD_* only by accident
// (seen in debug builds, missing in release), so Swift compares against these.
#define INBOX_CLD_EXITED 1
#define INBOX_CLD_KILLED 2
#define INBOX_CLD_DUMPED 3

/// The child step that failed; `inbox_spawn_step_name` gives the syscall name.
enum inbox_spawn_step {
    INBOX_SPAWN_OK = 0,
    INBOX_SPAWN_STEP_MMAP,
    INBOX_SPAWN_STEP_CLONE,
    INBOX_SPAWN_STEP_SIGACTION,
    INBOX_SPAWN_STEP_SETSID,
    INBOX_SPAWN_STEP_FCNTL,
    INBOX_SPAWN_STEP_DUP2,
    INBOX_SPAWN_STEP_CLOSE_RANGE,
    INBOX_SPAWN_STEP_PRLIMIT,
    INBOX_SPAWN_STEP_CHDIR,
    INBOX_SPAWN_STEP_SETGROUPS,
    INBOX_SPAWN_STEP_SETRESGID,
    INBOX_SPAWN_STEP_SETRESUID,
    INBOX_SPAWN_STEP_VERIFY_CREDENTIALS,
    INBOX_SPAWN_STEP_NO_NEW_PRIVS,
    INBOX_SPAWN_STEP_LANDLOCK,
    INBOX_SPAWN_STEP_PDEATHSIG,
    INBOX_SPAWN_STEP_SIGPROCMASK,
    INBOX_SPAWN_STEP_EXECVE,
};

/// The RLIMIT_* numbers, which differ between architectures (MIPS, SPARC). Swift cannot see glibc's
/// RLIMIT_NPROC: it is a macro naming `__RLIMIT_NPROC`.
enum inbox_rlimit_resource {
    INBOX_RLIMIT_CPU = RLIMIT_CPU,
    INBOX_RLIMIT_FSIZE = RLIMIT_FSIZE,
    INBOX_RLIMIT_CORE = RLIMIT_CORE,
    INBOX_RLIMIT_NPROC = RLIMIT_NPROC,
    INBOX_RLIMIT_NOFILE = RLIMIT_NOFILE,
    INBOX_RLIMIT_AS = RLIMIT_AS,
};

/// How many resource limits one request can carry.
#define INBOX_SPAWN_MAX_RLIMITS 16

/// One prlimit64(2) call: `resource` is an RLIMIT_* number (enum inbox_rlimit_resource);
/// RLIM64_INFINITY (~0ULL) means unlimited.
struct inbox_spawn_rlimit {
    int resource;
    unsigned long long soft, hard;
};

/// Everything the child does between clone and execve. Filled by Swift; the result fields by the child.
struct inbox_spawn_request {
    const char *path;                 // executable, passed to execve as is (no PATH search)
    char *const *argv;                // NULL-terminated
    char *const *envp;                // NULL-terminated
    const char *cwd;                  // NULL: inherit
    int stdin_fd, stdout_fd, stderr_fd;  // become 0, 1, 2 (close-on-exec cleared)
    int landlock_ruleset_fd;          // -1: none
    int listen_fd;                    // -1: none; else it becomes fd 3 (close-on-exec cleared): socket activation, or
                                      // a descriptor passed as 3 with nothing said of it (listen_pid_digits NULL)
    char *listen_pid_digits;          // NULL, or where the child writes its own pid in decimal and a NUL (room for
                                      // 20 digits): the value of the LISTEN_PID= string envp points at
    uid_t uid;                        // (uid_t)-1: keep
    gid_t gid;                        // (gid_t)-1: keep
    int ngroups;                      // -1: keep the supplementary groups; 0: clear them
    const gid_t *groups;
    mode_t umask;
    int parent_death_signal;          // 0: none
    int nrlimits;                     // 0...INBOX_SPAWN_MAX_RLIMITS, applied in order (the last one wins)
    struct inbox_spawn_rlimit rlimits[INBOX_SPAWN_MAX_RLIMITS];

    // Results: written by the child through the shared address space, read after clone returns.
    int failed_step;                  // enum inbox_spawn_step; INBOX_SPAWN_OK when execve happened
    int failed_errno;

    pid_t parent_pid;                 // private: set by inbox_spawn
};

/// Starts `req->path` in a new process with clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD).
/// Returns 0 with the child's pidfd (close-on-exec) and pid, or -1 with `failed_step` and `failed_errno` set;
/// a child that failed has already been reaped.
int inbox_spawn(struct inbox_spawn_request *req, int *pidfd_out, pid_t *pid_out);

/// The syscall name for a step, e.g. "execve" (static storage).
const char *inbox_spawn_step_name(int step);

/// pidfd_send_signal(2) with no siginfo. -1 and errno on failure.
int inbox_pidfd_send_signal(int pidfd, int sig);

/// pidfd_open(2) with no flags (the fd is close-on-exec). -1 and errno on failure.
int inbox_pidfd_open(pid_t pid);

/// memfd_create(2). -1 and errno on failure.
int inbox_memfd_create(const char *name, unsigned int flags);

/// waitid(P_PIDFD, pidfd, &info, options), options as given (WEXITED, WNOHANG, ...). Returns 0 and sets `*code`
/// (INBOX_CLD_EXITED, _KILLED, _DUMPED; 0 when WNOHANG found the child still running) and `*status`
/// (exit code or signal); -1 and errno on failure.
int inbox_waitid_pidfd(int pidfd, int *code, int *status, int options);

#endif
