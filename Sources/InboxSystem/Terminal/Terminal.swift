import Glibc

/// The terminal a preview is shown on: whether a descriptor is one, its size, and raw mode for reading keys one at a
/// time (termios(3)).
public enum Terminal {
    public struct Size: Sendable, Hashable {
        public var columns: Int
        public var rows: Int

        public init(columns: Int, rows: Int) {
            self.columns = columns
            self.rows = rows
        }
    }

    public static func isTerminal(_ descriptor: FileDescriptor) -> Bool {
        sys_isatty_fd(descriptor.rawValue) == 1
    }

    /// The window's size in cells; nil when it is not a terminal or reports none (0 × 0).
    public static func size(of descriptor: FileDescriptor) -> Size? {
        var size = winsize()
        guard sys_ioctl_winsize(descriptor.rawValue, &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return Size(columns: Int(size.ws_col), rows: Int(size.ws_row))
    }

    /// A terminal switched to raw input (no echo, no line editing, no signals from keys: ^C arrives as a byte) until
    /// `restore()`; output processing stays on, so `\n` still starts a new line.
    public final class RawMode {
        private let descriptor: FileDescriptor
        private var saved: termios
        private var restored = false

        /// nil when `descriptor` is not a terminal.
        public init?(_ descriptor: FileDescriptor) {
            var attributes = termios()
            guard sys_tcgetattr(descriptor.rawValue, &attributes) == 0 else { return nil }
            self.descriptor = descriptor
            saved = attributes
            attributes.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
            attributes.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
            attributes.c_cflag |= tcflag_t(CS8)
            // VMIN 1, VTIME 0: a read returns as soon as one byte (or an escape sequence's bytes) arrived.
            withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            guard sys_tcsetattr(descriptor.rawValue, &attributes) == 0 else { return nil }
        }

        /// Puts the terminal back as it was; once.
        public func restore() {
            guard !restored else { return }
            restored = true
            _ = sys_tcsetattr(descriptor.rawValue, &saved)
        }

        deinit { restore() }
    }
}
