import Glibc

func sys_isatty_fd(_ fd: CInt) -> CInt { isatty(fd) }

func sys_tcgetattr(_ fd: CInt, _ attributes: inout termios) -> CInt { tcgetattr(fd, &attributes) }

// TCSANOW: keys typed before raw mode began stay to be read (TCSAFLUSH would drop them).
func sys_tcsetattr(_ fd: CInt, _ attributes: inout termios) -> CInt { tcsetattr(fd, TCSANOW, &attributes) }

func sys_ioctl_winsize(_ fd: CInt, _ size: inout winsize) -> CInt { ioctl(fd, UInt(TIOCGWINSZ), &size) }
