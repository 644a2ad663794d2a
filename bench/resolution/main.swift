// Type resolution cost per file with many registrations loaded (docs/design.md, Targets asks for benchmarks,
// never timed tests). Run through bench/run --only resolution, or directly:
//   inboxd-bench-resolution --inboxd PATH --corpus DIR [--registrations 5000] [--rounds 20] [--json]
// PATH is the inboxd binary: libmagic runs in its sandboxed sniffer child (`inboxd --content-sniffer`), as in the agent.
// DIR holds real files (Tests/Corpus/make-corpus makes them). Each file is opened the way the agent opens it,
// then timed through the agent's steps: the claim (attribute, name), the content (libmagic on the first 64 KiB,
// unless plain text with a concrete claim), the decision, and choosing among the handlers.
import Foundation
import Glibc
import InboxCore
import InboxSystem

func warn(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
}

struct Options {
    var inboxd = ""
    var corpus = ""
    var registrations = 5000
    var rounds = 20
    var json = false
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--inboxd": options.inboxd = arguments.popFirst() ?? ""
        case "--corpus": options.corpus = arguments.popFirst() ?? ""
        case "--registrations": options.registrations = Int(arguments.popFirst() ?? "") ?? -1
        case "--rounds": options.rounds = Int(arguments.popFirst() ?? "") ?? -1
        case "--json": options.json = true
        default:
            warn("usage: inboxd-bench-resolution --inboxd PATH --corpus DIR [--registrations N] [--rounds N] [--json]")
            exit(2)
        }
    }
    guard !options.corpus.isEmpty, !options.inboxd.isEmpty, options.registrations >= 0, options.rounds > 0 else {
        warn("usage: inboxd-bench-resolution --inboxd PATH --corpus DIR [--registrations N] [--rounds N] [--json]")
        exit(2)
    }
    return options
}

/// A deterministic generator, so every run loads the same registrations.
struct Generator {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}

func write(_ text: String, to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(fd >= 0, "cannot create \(path)")
    _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// N registrations in a fresh directory: a mix of built-in UTIs, MIME types, dynamic identifiers and types the
/// registrations export themselves (each with an extension of its own), at every rank.
func makeRegistrations(_ count: Int, mime: MIMEDatabase) -> String {
    var template = Array("/tmp/inboxd-bench-handlers.XXXXXX".utf8CString)
    precondition(mkdtemp(&template) != nil)
    let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let builtin = TypeDatabase.builtin.allIdentifiers
    let mimeTypes = mime.knownTypes.isEmpty ? ["application/x-bench"] : mime.knownTypes
    let ranks = ["Owner", "Default", "Alternate", "None"]
    var random = Generator()
    for index in 0..<count {
        var contentTypes: [String] = []
        var exported = ""
        for _ in 0..<(1 + random.next(3)) {
            switch random.next(10) {
            case 0..<4: contentTypes.append(builtin[random.next(builtin.count)])
            case 4..<6: contentTypes.append(mimeTypes[random.next(mimeTypes.count)])
            case 6: contentTypes.append(DynamicType.identifier(for: mimeTypes[random.next(mimeTypes.count)]))
            default:
                let identifier = "com.bench.type\(index)"
                if exported.isEmpty {
                    exported = """
                        [ExportedType]
                        Identifier=\(identifier)
                        ConformsTo=\(builtin[random.next(builtin.count)])
                        Extensions=bt\(index)

                        """
                }
                contentTypes.append(identifier)
            }
        }
        write("""
            [Handler]
            Identifier=bench.handler\(index)
            Exec=/bin/true %f

            [DocumentType]
            ContentTypes=\(contentTypes.joined(separator: " "))
            Rank=\(ranks[random.next(ranks.count)])

            \(exported)
            """, to: "\(directory)/bench.handler\(index).handler")
    }
    return directory
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

let options = parseOptions()
let clock = ContinuousClock()
let (mime, problems) = MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories())
for problem in problems { warn("warning: \(problem)") }
let handlers = makeRegistrations(options.registrations, mime: mime)
let loadStart = clock.now
let loaded = RegistrationLoader.load(directories: [handlers], mime: mime)
let loadTime = clock.now - loadStart
let errors = loaded.diagnostics.filter { $0.isError }
guard errors.isEmpty else {
    warn("registration errors: \(errors.prefix(3))")
    exit(1)
}
let sniffer: SnifferProcess
do {
    sniffer = try SnifferProcess(executable: options.inboxd, identity: nil, landlockABI: LandlockRuleset.abi(),
                                 mimeDirectories: MIMEDatabaseLoader.defaultDirectories())
} catch {
    warn("cannot start the content sniffer: \(error)")
    exit(1)
}

guard let corpus = try? Directory(path: options.corpus), let entries = try? corpus.entries() else {
    warn("cannot read \(options.corpus)")
    exit(1)
}
let names = entries.compactMap { String(validating: $0, as: UTF8.self) }.filter { !$0.hasPrefix(".") && $0 != "expected.tsv" }.sorted()
// A few names only the registrations know, so their declared extensions are exercised too.
var files: [(name: String, fd: FileDescriptor)] = []
for name in names {
    let fd = open(options.corpus + "/" + name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    if fd >= 0 { files.append((name, FileDescriptor(rawValue: fd))) }
}
let corpusCount = files.count
guard corpusCount > 0 else {
    warn("no files in \(options.corpus)")
    exit(1)
}
for index in stride(from: 0, to: options.registrations, by: max(1, options.registrations / 20)) {
    files.append(("bench-\(index).bt\(index)", files[index % corpusCount].fd))
}
let preferences = HandlerPreferences(byType: [:])

// For reference: the same libmagic calls in this process, which the agent never makes (its sniffer is a sandboxed
// child); the difference is what the isolation costs.
let inProcess: ContentSniffer
do { inProcess = try ContentSniffer() } catch {
    warn("cannot load libmagic: \(error)")
    exit(1)
}
// What the agent's catalog would let the sniffer ask, for these registrations.
let needs = ContentNeeds.of(loaded.registrations, in: loaded.database)
inProcess.rules = MIMEDatabaseLoader.loadMagic(directories: MIMEDatabaseLoader.defaultDirectories()).rules
var inProcessTimes: [Double] = []
for _ in 0..<options.rounds {
    for file in files {
        let claim = TypeResolver.claim(explicit: nil, fileName: file.name, in: loaded.database)
        let start = clock.now
        let asked = needs.request(for: claim)
        _ = inProcess.sniff(file.fd, text: asked.text, namingBinary: asked.namingBinary, refiningText: asked.refiningText)
        inProcessTimes.append(microseconds(clock.now - start))
    }
}

// The agent's steps for each file, in its order (Agent.resolveType, then the selection in route).
var claimTimes: [Double] = [], sniffTimes: [Double] = [], decideTimes: [Double] = [], selectTimes: [Double] = []
var totalTimes: [Double] = []
var handled = 0, libmagicAsked = 0
for _ in 0..<options.rounds {
    for file in files {
        let start = clock.now
        let claim = TypeResolver.claim(explicit: nil, fileName: file.name, in: loaded.database)
        let claimed = clock.now
        let asked = needs.request(for: claim)
        let content = try? sniffer.sniff(file.fd, text: asked.text, namingBinary: asked.namingBinary,
                                         refiningText: asked.refiningText).get().mimeType
        let sniffed = clock.now
        let resolved = TypeResolver.decide(claim, content: content, in: loaded.database)
        let decided = clock.now
        let selection = HandlerSelector.select(type: resolved.identifier, index: loaded.index, database: loaded.database,
                                               preferences: preferences, ranking: .best)
        let selected = clock.now
        if selection.chosen != nil { handled += 1 }
        if claim.needsTextClassified || content != "text/plain" { libmagicAsked += 1 }
        claimTimes.append(microseconds(claimed - start))
        sniffTimes.append(microseconds(sniffed - claimed))
        decideTimes.append(microseconds(decided - sniffed))
        selectTimes.append(microseconds(selected - decided))
        totalTimes.append(microseconds(selected - start))
    }
}
let rows: [(String, [Double])] = [("claim (attribute, name)", claimTimes), ("content (64 KiB, sniffer child)", sniffTimes),
                                  ("decision", decideTimes), ("handler selection", selectTimes),
                                  ("per file, all four", totalTimes),
                                  ("(reference: libmagic in this process)", inProcessTimes)]
let resolutions = totalTimes.count
if options.json {
    let steps = rows.map { row -> String in
        let sorted = row.1.sorted()
        return "{\"step\": \"\(row.0)\", \"median_us\": \(percentile(sorted, 0.5)), \"p99_us\": \(percentile(sorted, 0.99))}"
    }
    print("{\"registrations\": \(loaded.registrations.count), \"files\": \(files.count), \"resolutions\": \(resolutions), "
          + "\"handled\": \(handled), \"load_ms\": \(microseconds(loadTime) / 1000), \"steps\": [\(steps.joined(separator: ", "))]}")
} else {
    print("type resolution: \(loaded.registrations.count) registrations (loaded in "
          + "\(Int(microseconds(loadTime) / 1000)) ms, \(loaded.database.allIdentifiers.count) declared types, "
          + "\(mime.knownTypes.count) MIME types), \(files.count) files x \(options.rounds) rounds")
    print("  step                                  median      p99")
    for (label, values) in rows {
        let sorted = values.sorted()
        let padded = label.padding(toLength: 36, withPad: " ", startingAt: 0)
        print("  \(padded) \(String(format: "%7.1f", percentile(sorted, 0.5))) µs \(String(format: "%7.1f", percentile(sorted, 0.99))) µs")
    }
    print("  \(handled) of \(resolutions) resolutions found a handler; libmagic was asked for \(libmagicAsked) "
          + "(the others were plain text with a concrete claim)")
}
