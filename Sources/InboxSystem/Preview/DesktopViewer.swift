import InboxCore

/// Quick Look on a desktop: the document handed to the session's own viewer for its type with `xdg-open`, which asks
/// the desktop (its portal, or mimeapps.list and the `.desktop` files) which program that is.
///
/// The viewer is the person's own program, run as them, outside the generators' sandbox: it is what they would get
/// by opening the file in their file manager.
public enum DesktopViewer {
    /// A desktop session is present: a Wayland or X display is named in the environment.
    public static var sessionPresent: Bool {
        ["WAYLAND_DISPLAY", "DISPLAY"].contains { !(CurrentProcess.environment($0) ?? "").isEmpty }
    }

    /// Runs `xdg-open path` and waits for it (it returns once the viewer is started); `output` takes what it says.
    /// The error is a sentence: not installed, or its exit status with what xdg-open's statuses mean.
    public static func open(_ path: String, output: FileDescriptor) -> Result<Void, PreviewError> {
        guard let program = GeneratorTool.locate("xdg-open") else {
            return .failure(.unsupported("xdg-open is not installed (Debian package xdg-utils)"))
        }
        var environment: [String] = []
        for (key, value) in CurrentProcess.environmentVariables.sorted(by: { $0.key < $1.key }) {
            environment.append(key + "=" + value)
        }
        let devNull: FileDescriptor
        do { devNull = try .open("/dev/null", .readOnly) } catch {
            return .failure(.system(SystemError("open", path: "/dev/null", errno: error)))
        }
        defer { devNull.close() }
        var request = SpawnRequest(executablePath: program, arguments: ["xdg-open", path], environment: environment,
                                   standardInput: devNull, standardOutput: output, standardError: output)
        request.umask = 0o022
        let process: SpawnedProcess
        do { process = try spawn(request) } catch {
            return .failure(.system(SystemError(error.step, path: error.path, errno: error.errno)))
        }
        defer { process.pidfd.close() }
        switch waitForExit(process) {
        case .exited(0):
            return .success(())
        case .exited(let code):
            // xdg-open(1): 1 syntax, 2 the file does not exist, 3 a required tool is missing, 4 the action failed.
            let meaning = switch code {
            case 2: "the file was not found"
            case 3: "no program is set to open this type (xdg-mime default)"
            case 4: "the viewer failed to start"
            default: "it failed"
            }
            return .failure(.failed("xdg-open exited with status \(code): \(meaning)"))
        case let other:
            return .failure(.failed("xdg-open \(other)"))
        }
    }
}
