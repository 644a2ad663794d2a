import Glibc

func sys_inotify_init1(_ flags: CInt) -> CInt { inotify_init1(flags) }

func sys_inotify_add_watch(_ fd: CInt, _ path: String, _ mask: UInt32) -> CInt {
    inotify_add_watch(fd, path, mask)
}

func sys_inotify_rm_watch(_ fd: CInt, _ watch: CInt) -> CInt { inotify_rm_watch(fd, watch) }
