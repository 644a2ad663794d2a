import Foundation
import InboxCore
import Testing

/// The man pages in man/: each renders cleanly, and each option and subcommand that the built binaries declare
/// (their own --help, generated from AgentOption and each command's CommandOptions) is documented in its page.
@Suite(.enabled(if: ManPages.toolsPresent, "man and groff are needed to render the pages (scripts/setup installs groff)"))
struct ManPageTests {
    @Test(arguments: ManPages.all)
    func rendersWithoutWarnings(page: String) throws {
        let path = ManPages.directory.appendingPathComponent(page).path
        // -t: the pages that have tables say so on their first line ('\" t), as man(1) expects.
        let groff = try run("/usr/bin/groff", ["-ww", "-t", "-man", "-z", path])
        #expect(groff.status == 0 && groff.stderr.isEmpty, "groff -ww on \(page):\n\(groff.stderr)")
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "80"
        let man = try run("/usr/bin/man", ["-l", path], environment: environment)
        #expect(man.status == 0 && man.stderr.isEmpty, "man -l \(page):\n\(man.stderr)")
        #expect(man.stdout.contains("NAME") && man.stdout.contains("SEE ALSO"), "\(page) has no NAME or SEE ALSO")
    }

    @Test func inboxdDocumentsEveryOption() throws {
        let help = try run(Binaries.inboxd.path, ["--help"])
        #expect(help.status == 0)
        let declared = HelpText(help.stdout).options(in: "OPTIONS")
        #expect(declared.isSuperset(of: ["--version", "-h", "--help"]), "\(declared)")
        let page = try ManPage("inboxd.8")
        let documented = page.tags(in: "OPTIONS")
        for option in declared {
            #expect(documented.contains(option), "inboxd.8, OPTIONS: \(option) is missing (has \(documented.sorted()))")
        }
        for option in AgentOption.allCases {
            #expect(declared.contains(option.name), "inboxd --help does not list \(option.name)")
        }
    }

    @Test func inboxctlDocumentsEverySubcommand() throws {
        let help = try run(Binaries.inboxctl.path, ["--help"])
        #expect(help.status == 0)
        let subcommands = HelpText(help.stdout).rows(in: "SUBCOMMANDS")
        #expect(subcommands.count >= 11, "\(subcommands)")
        let page = try ManPage("inboxctl.1")
        let headings = page.subsections(in: "SUBCOMMANDS")
        for name in subcommands {
            #expect(headings.contains { $0.hasPrefix("inboxctl \(name) ") || $0 == "inboxctl \(name)" },
                    "inboxctl.1, SUBCOMMANDS: no subsection for '\(name)' (has \(headings))")
        }
        // inboxctl's own options, before any subcommand.
        let topLevel = HelpText(help.stdout).options(in: "OPTIONS")
        #expect(topLevel.isSuperset(of: ["-h", "--help"]), "\(topLevel)")
        for option in topLevel {
            #expect(page.tags(in: "OPTIONS").contains(option), "inboxctl.1, OPTIONS: \(option) is missing")
        }
        #expect(page.text(of: "SYNOPSIS").contains("inboxctl help"))
    }

    @Test func inboxctlDocumentsEveryOptionOfEverySubcommand() throws {
        let page = try ManPage("inboxctl.1")
        let subcommands = HelpText(try run(Binaries.inboxctl.path, ["--help"]).stdout).rows(in: "SUBCOMMANDS")
        // The agent's options, as inboxctl's help prints them: documented once, under AGENT OPTIONS. A command that
        // declares one itself with another meaning (send's --inbox) prints another line, documented with the command.
        let agentLines = Set(AgentOption.inboxctl.compactMap { option in option.inboxctlHelp.map(option.option.helpLine) }
                             + AgentInstance.allCases.map { $0.option.helpLine($0.help) })
        let agentDocumented = page.tags(in: "AGENT OPTIONS")
        for option in AgentOption.inboxctl.map(\.name) + AgentInstance.allCases.map(\.flag) {
            #expect(agentDocumented.contains(option), "inboxctl.1, AGENT OPTIONS: \(option) is missing")
        }
        for name in subcommands {
            let help = try run(Binaries.inboxctl.path, ["help", name])
            #expect(help.status == 0, "inboxctl help \(name): \(help.stderr)")
            let documented = page.tags(inSubsectionStarting: "inboxctl \(name)", of: "SUBCOMMANDS")
            for line in HelpText(help.stdout).lines(in: "OPTIONS") where !agentLines.contains(line) {
                for option in HelpText.optionNames(line) where option != "-h" && option != "--help" {
                    #expect(documented.contains(option),
                            "inboxctl.1: '\(option)' of 'inboxctl \(name)' is not among \(documented.sorted())")
                }
            }
        }
    }
}

/// The repository's man/ directory and what rendering its pages needs.
enum ManPages {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../man").standardizedFileURL
    static let all = ["inboxd.8", "inboxctl.1", "inboxd.handler.5", "inboxd.conf.5", "inboxd-handler-protocol.7"]
    static let toolsPresent = FileManager.default.isExecutableFile(atPath: "/usr/bin/groff")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/man")
}

/// One page as man(1) renders it for a terminal (plain text: the output is a pipe): section headings at column 0,
/// subsection headings at 3, the tags of tagged paragraphs (.TP) at 7.
struct ManPage {
    let lines: [String]

    init(_ name: String) throws {
        var environment = ProcessInfo.processInfo.environment
        // Wide enough that no tag or heading is broken across lines.
        environment["MANWIDTH"] = "250"
        let rendered = try run("/usr/bin/man", ["-l", ManPages.directory.appendingPathComponent(name).path],
                               environment: environment)
        guard rendered.status == 0 else { throw ManPageError(description: "man -l \(name): \(rendered.stderr)") }
        lines = rendered.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The lines of section `name`, up to the next section.
    func section(_ name: String) -> ArraySlice<String> {
        guard let start = lines.firstIndex(of: name) else { return [] }
        let end = lines[(start + 1)...].firstIndex { !$0.isEmpty && !$0.hasPrefix(" ") } ?? lines.endIndex
        return lines[(start + 1)..<end]
    }

    func text(of section: String) -> String { self.section(section).joined(separator: "\n") }

    /// The subsection headings of a section, without their indentation.
    func subsections(in section: String) -> [String] {
        self.section(section).filter(Self.isSubsectionHeading).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The option names that start the tags of the section's tagged paragraphs.
    func tags(in section: String) -> Set<String> { Self.tags(self.section(section)) }

    /// The same within the subsection whose heading starts with `heading`.
    func tags(inSubsectionStarting heading: String, of section: String) -> Set<String> {
        let lines = self.section(section)
        guard let start = lines.firstIndex(where: {
            Self.isSubsectionHeading($0) && ($0.trimmingCharacters(in: .whitespaces) + " ").hasPrefix(heading + " ")
        }) else { return [] }
        let end = lines[(start + 1)...].firstIndex(where: Self.isSubsectionHeading) ?? lines.endIndex
        return Self.tags(lines[(start + 1)..<end])
    }

    private static func isSubsectionHeading(_ line: String) -> Bool {
        line.hasPrefix("   ") && !line.hasPrefix("    ")
    }

    private static func tags(_ lines: ArraySlice<String>) -> Set<String> {
        var names: Set<String> = []
        for line in lines where line.hasPrefix("       -") && !line.hasPrefix("        ") {
            names.formUnion(HelpText.optionNames(String(line.dropFirst(7))))
        }
        return names
    }
}

struct ManPageError: Error, CustomStringConvertible {
    let description: String
}

/// Help text in the house format (STYLE.md, inboxctl): `SECTION:` headings, rows indented by two.
struct HelpText {
    let lines: [String]

    init(_ text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// The rows of a section (`  label   meaning`), as they are.
    func lines(in section: String) -> [String] {
        guard let start = lines.firstIndex(of: section + ":") else { return [] }
        // Up to the blank line that ends it (SUBCOMMANDS is followed by a "See ..." hint).
        return Array(lines[(start + 1)...].prefix { $0.hasPrefix("  ") })
    }

    /// The first word of each row of a section.
    func rows(in section: String) -> [String] {
        lines(in: section).compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// The option names of each row of a section.
    func options(in section: String) -> Set<String> {
        Set(lines(in: section).flatMap(Self.optionNames))
    }

    /// The option names at the start of a row or a tag: `-n, --lines N   meaning` gives -n and --lines.
    static func optionNames(_ row: String) -> [String] {
        var names: [String] = []
        for word in row.trimmingCharacters(in: .whitespaces).split(separator: " ") {
            let name = word.hasSuffix(",") ? word.dropLast() : word
            guard name.hasPrefix("-"), name.count > 1 else { break }
            names.append(String(name))
            if !word.hasSuffix(",") { break }
        }
        return names
    }
}
