import CSystemd
import Glibc

/// Calls back when the mount table changes: /proc/self/mountinfo polls with EPOLLPRI after each mount or unmount
/// (proc(5)), as systemd watches it. An Inbox mounted over, or unmounted while the agent holds it open (which keeps
/// the kernel from sending IN_UNMOUNT), sends no inotify event at all; this is how the agent notices.
final class MountWatch {
    private let file: FileDescriptor
    private var source: EventSource?

    init?(loop: EventLoop, _ changed: @escaping () -> Void) {
        guard let file = try? FileDescriptor.open("/proc/self/mountinfo", .readOnly) else { return nil }
        self.file = file
        // Level-triggered: reading the poll state is what resets it, so each change is seen once.
        source = try? loop.addIO(file, events: EPOLLPRI.rawValue) { _ in changed() }
        if source == nil {
            file.close()
            return nil
        }
    }

    func stop() { source?.setEnabled(.off) }

    deinit { file.close() }
}
