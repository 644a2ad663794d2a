import Glibc

func sys_isatty_fd(_ fd: CInt) -> CInt { isatty(fd) }

func sys_tcgetattr(_ fd: CInt, _ attributes: inout termios) -> CInt { tcgetattr(fd, &attributes) }

func sys_tcsetattr(_ fd: CInt, _ attributes: inout termios) -> CInt { tcsetattr(fd, TCSAFLUSH, &attributes) }

func sys_ioctl_winsize(_ fd: CInt, _ size: inout winsize) -> CInt { ioctl(fd, UInt(TIOCGWINSZ), &size) }
