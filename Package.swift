// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "inboxd",
    products: [
        .executable(name: "inboxd", targets: ["inboxd"]),
        .executable(name: "inboxctl", targets: ["inboxctl"]),
        // bench/run --only resolution: type resolution cost per file with many registrations loaded.
        .executable(name: "inboxd-bench-resolution", targets: ["inboxd-bench-resolution"]),
        // What a resident handler (Activation=resident) written in Swift links: its deliveries and its answers.
        .library(name: "InboxHandlerKit", targets: ["InboxHandlerKit"]),
        // The agent's cluster child: the only executable that links InboxCluster (libnats).
        .executable(name: "inboxd-cluster", targets: ["inboxd-cluster"]),
        // The example resident handler of handlers.d/com.example.checksum.handler.
        .executable(name: "inboxd-example-checksum", targets: ["inboxd-example-checksum"]),
    ],
    targets: [
        // Pure logic: types, registrations, selection, field expansion, policies. No syscalls.
        .target(name: "InboxCore", resources: [.embedInCode("Resources/BuiltinTypes.types")]),
        // libsystemd: sd-event, sd-journal, sd-daemon.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // libmagic: content sniffing.
        .systemLibrary(name: "CMagic", pkgConfig: "libmagic", providers: [.apt(["libmagic-dev"])]),
        // libcups: printing through the destination API (Debian's libcups2-dev ships no pkg-config file).
        .systemLibrary(name: "CCups", providers: [.apt(["libcups2-dev"])]),
        // libnats: the NATS client (core NATS, JetStream, key-value) of the cluster layer (InboxSystem/Cluster/).
        .systemLibrary(name: "CNats", pkgConfig: "libnats", providers: [.apt(["libnats-dev", "libssl-dev"])]),
        // What Swift cannot call: variadic syscall(), the child side of spawning.
        .target(name: "CShims"),
        // The Linux layer (Base/, Files/, Inotify/, EventLoop/, Journal/, Sniffing/, ...) and, in its own folders, the
        // agent's middle built on it (Agent/, Intake/, Routing/, Dispatch/, Launchers/, ...): docs/design.md, Layers.
        .target(name: "InboxSystem", dependencies: ["InboxCore", "CSystemd", "CMagic", "CCups", "CShims"]),
        // The NATS JetStream layer of a cluster (docs/design.md, Cluster: the NATS layer): a module of its own, so that
        // libnats and the OpenSSL it brings are mapped only by what links it, never by the agent or inboxctl as such.
        .target(name: "InboxCluster", dependencies: ["InboxSystem", "InboxCore", "CNats"]),
        // The Swift runtime is linked statically into both executables. The agent maps only the pages it uses,
        // which keeps its resident memory under the 12 MB of docs/design.md, Targets (about 12.0 MB dynamic,
        // 9.5 MB static); and Swift is no Debian package, so the .deb of scripts/package can depend only on
        // Debian's libraries (no RUNPATH into the toolchain). Release builds only: debug builds link the
        // executables into the test bundle, which needs the shared Foundation.
        .executableTarget(name: "inboxd", dependencies: ["InboxSystem", "InboxCore"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]),
        .executableTarget(name: "inboxctl", dependencies: ["InboxSystem", "InboxCore"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]),
        // The cluster child (docs/design.md, Cluster: the NATS layer): libnats and OpenSSL live here, never in the agent.
        // Linked like the agent, for the same reasons.
        .executableTarget(name: "inboxd-cluster", dependencies: ["InboxCluster", "InboxSystem", "InboxCore"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]),
        .executableTarget(name: "inboxd-bench-resolution", dependencies: ["InboxSystem", "InboxCore"],
                          path: "bench/resolution"),
        // The resident handler protocol (docs/handler-protocol.md) from the handler's side; no Foundation.
        .target(name: "InboxHandlerKit", dependencies: ["InboxCore", "CShims"]),
        // Linked like the agent: the package ships it as an example handler, and Swift is no Debian package.
        .executableTarget(name: "inboxd-example-checksum", dependencies: ["InboxHandlerKit"], path: "handlers.d/src/checksum",
                          linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]),
        .testTarget(name: "InboxCoreTests", dependencies: ["InboxCore"]),
        .testTarget(name: "InboxSystemTests", dependencies: ["InboxSystem", "InboxCore"]),
        .testTarget(name: "IntegrationTests", dependencies: ["inboxd", "inboxctl", "inboxd-example-checksum", "inboxd-cluster", "InboxCore",
                                                           "InboxSystem", "InboxCluster"]),
    ],
    swiftLanguageModes: [.v6]
)
