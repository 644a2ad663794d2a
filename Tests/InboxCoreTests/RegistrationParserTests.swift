import Testing
@testable import InboxCore

@Suite("Registration parser")
struct RegistrationParserTests {
    static let designExample = """
        # Comments stand on their own lines, as in systemd unit files.
        [Handler]
        # reverse-DNS; defaults to the file's stem
        Identifier=com.example.profile-viewer
        Name=Profile Viewer
        Exec=/usr/libexec/profile-viewer --open %f
        # optional; a handler never runs as root unless User=root
        User=profile-viewer
        TimeoutSec=30
        MaxConcurrent=4

        [DocumentType]
        Name=Custom Profile
        ContentTypes=com.example.customprofile
        Rank=Owner
        Role=Editor
        IconFiles=profile-44.png profile-560.png

        [ExportedType]
        Identifier=com.example.customprofile
        Description=Custom Profile
        ConformsTo=public.data public.content
        Extensions=customprofile
        MIMETypes=application/x-customprofile
        """

    @Test func designExampleParses() throws {
        let file = RegistrationParser.parse(bytes(Self.designExample), path: "/etc/inboxd/handlers.d/profile.handler")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(registration.identifier == "com.example.profile-viewer")
        #expect(registration.name == "Profile Viewer")
        #expect(registration.exec.arguments == ["/usr/libexec/profile-viewer", "--open", "%f"])
        #expect(registration.user == "profile-viewer")
        #expect(registration.group == nil)
        #expect(registration.timeout == .seconds(30))
        #expect(registration.timeoutDisabled == false)
        #expect(registration.maxConcurrent == 4)
        #expect(registration.environment == [:])
        #expect(registration.path == "/etc/inboxd/handlers.d/profile.handler")
        let location = SourceLocation(file: "/etc/inboxd/handlers.d/profile.handler", line: 12)
        #expect(registration.documentTypes == [
            DocumentType(name: "Custom Profile", contentTypes: ["com.example.customprofile"], rank: .owner,
                         role: .editor, iconFiles: ["profile-44.png", "profile-560.png"], location: location),
        ])
        #expect(registration.exportedTypes == [
            TypeDeclaration(identifier: "com.example.customprofile", description: "Custom Profile",
                            conformsTo: ["public.data", "public.content"], extensions: ["customprofile"],
                            mimeTypes: ["application/x-customprofile"],
                            origin: .exported(SourceLocation(file: location.file, line: 19))),
        ])
        #expect(registration.importedTypes == [])
    }

    @Test func defaultsComeFromTheFileAndTheFirstContentType() throws {
        let file = RegistrationParser.parse(
            lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "ContentTypes=public.png public.jpeg"),
            path: "/usr/lib/inboxd/handlers.d/com.example.viewer.handler")
        let registration = try #require(file.registration)
        #expect(registration.identifier == "com.example.viewer")
        #expect(registration.name == "com.example.viewer")
        #expect(registration.timeout == nil)
        #expect(registration.documentTypes.map(\.name) == ["public.png"])
        #expect(registration.documentTypes.map(\.rank) == [.default])
        #expect(registration.documentTypes.map(\.role) == [.viewer])
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: [UInt8]
        let diagnostics: [String]
        var testDescription: String { name }
    }

    /// Each kind of error, with the exact line it is reported on; a file with any error yields no registration.
    static let errorCases: [Case] = [
        Case(name: "bad OutputLimit", input: lines("[Handler]", "Exec=/bin/true", "OutputLimit=-1",
                                                   "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: invalid OutputLimit= '-1': expected a size (64K, 1M) or infinity"]),
        Case(name: "OutputLimit overflow", input: lines("[Handler]", "Exec=/bin/true", "OutputLimit=99999999999T",
                                                        "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: invalid OutputLimit= '99999999999T': expected a size (64K, 1M) or infinity"]),
        Case(name: "bad line", input: lines("[Handler]", "Exec=/bin/true", "this is not valid",
                                            "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: expected a [Section], a comment or Key=Value, got 'this is not valid'"]),
        Case(name: "key outside section", input: lines("# first", "Exec=/bin/true", "[Handler]", "Exec=/bin/true",
                                                       "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: key 'Exec' outside any section"]),
        Case(name: "bad section header", input: lines("[Handler", "Exec=/bin/true"),
             diagnostics: ["t.handler:1: invalid section header '[Handler'", "t.handler:2: key 'Exec' outside any section",
                           "t.handler:1: missing [Handler] section"]),
        Case(name: "bad Rank", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "ContentTypes=public.png",
                                            "Rank=Boss"),
             diagnostics: ["t.handler:5: invalid Rank= 'Boss': expected Owner, Default, Alternate or None"]),
        Case(name: "bad Role", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "ContentTypes=public.png",
                                            "Role=Printer"),
             diagnostics: ["t.handler:5: invalid Role= 'Printer': expected Editor, Viewer, Shell or None"]),
        Case(name: "bad Exec quoting", input: lines("[Handler]", "Exec=/bin/echo \"unterminated",
                                                    "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: bad quoting in Exec=: unterminated \" quote"]),
        Case(name: "unknown field code", input: lines("[Handler]", "Exec=/bin/echo %x", "[DocumentType]",
                                                      "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: unknown field code '%x' in Exec="]),
        Case(name: "relative Exec", input: lines("[Handler]", "Exec=echo %f", "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: Exec= program 'echo' is not an absolute path"]),
        Case(name: "missing Exec", input: lines("# nothing", "[Handler]", "Name=Foo", "[DocumentType]",
                                                "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: missing Exec= in [Handler]"]),
        Case(name: "keys are case-sensitive", input: lines("[Handler]", "exec=/bin/true", "[DocumentType]",
                                                           "ContentTypes=public.png"),
             diagnostics: ["t.handler:1: missing Exec= in [Handler]",
                           "t.handler:2: warning: unknown key 'exec' in section [Handler], ignored; did you mean 'Exec='?"]),
        Case(name: "no [Handler]", input: lines("[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:1: missing [Handler] section"]),
        Case(name: "empty file", input: [], diagnostics: ["t.handler:1: missing [Handler] section"]),
        Case(name: "non-UTF-8", input: lines("[Handler]", "Exec=/bin/true") + [0x0A] + [0x4E, 0x61, 0x6D, 0x65, 0x3D, 0xFF]
                + lines("", "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: line is not valid UTF-8"]),
        Case(name: "NUL byte", input: lines("[Handler]", "Exec=/bin/true\u{0}"),
             diagnostics: ["t.handler:1: missing Exec= in [Handler]",
                           "t.handler:1: warning: no [DocumentType] section: this handler opens no files",
                           "t.handler:2: line contains a NUL byte"]),
        Case(name: "oversized", input: [UInt8](repeating: UInt8(ascii: "#"), count: (1 << 20) + 1),
             diagnostics: ["t.handler:1: file is 1048577 bytes, larger than the limit of 1048576"]),
        Case(name: "continuation keeps the start line", input: lines("[Handler]", "Exec=/bin/echo \\",
                                                                     "  \"unterminated", "[DocumentType]",
                                                                     "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: bad quoting in Exec=: unterminated \" quote"]),
        Case(name: "continuation over a comment", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                               "ContentTypes=public.png", "Rank=\\", "# note",
                                                               "  Boss"),
             diagnostics: ["t.handler:5: invalid Rank= 'Boss': expected Owner, Default, Alternate or None"]),
        Case(name: "bad TimeoutSec", input: lines("[Handler]", "Exec=/bin/true", "TimeoutSec=soon", "[DocumentType]",
                                                  "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: invalid TimeoutSec=: invalid time span 'soon'"]),
        Case(name: "MaxConcurrent zero", input: lines("[Handler]", "Exec=/bin/true", "MaxConcurrent=0",
                                                      "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: MaxConcurrent= must be a positive integer, got '0'"]),
        Case(name: "MaxConcurrent not a number", input: lines("[Handler]", "Exec=/bin/true", "MaxConcurrent=four",
                                                              "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: MaxConcurrent= must be a positive integer, got 'four'"]),
        Case(name: "bad Identifier", input: lines("[Handler]", "Identifier=com.example/viewer", "Exec=/bin/true",
                                                  "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:2: invalid Identifier= 'com.example/viewer': use letters, digits, '.' and '-'"]),
        Case(name: "bad content type", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                    "ContentTypes=public.png image/ a,b"),
             diagnostics: ["t.handler:4: invalid type identifier or MIME type 'image/' in ContentTypes=",
                           "t.handler:4: invalid type identifier or MIME type 'a,b' in ContentTypes="]),
        Case(name: "DocumentType without ContentTypes", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                                     "Name=Nothing"),
             diagnostics: ["t.handler:3: [DocumentType] without ContentTypes= or NamePatterns="]),
        Case(name: "ExportedType without Identifier", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                                   "ContentTypes=public.png", "[ExportedType]",
                                                                   "MIMETypes=text/x-foo"),
             diagnostics: ["t.handler:5: [ExportedType] without Identifier="]),
        Case(name: "bad MIME type", input: lines("[Handler]", "Exec=/bin/true", "[ImportedType]", "Identifier=a.b",
                                                 "MIMETypes=notamime"),
             diagnostics: ["t.handler:1: warning: no [DocumentType] section: this handler opens no files",
                           "t.handler:5: invalid MIME type 'notamime' in MIMETypes="]),
        Case(name: "every error is reported", input: lines("[Handler]", "Exec=/bin/echo %q", "MaxConcurrent=-1",
                                                           "[DocumentType]", "ContentTypes=public.png", "Rank=High",
                                                           "Role=Boss", "garbage"),
             diagnostics: ["t.handler:2: unknown field code '%q' in Exec=",
                           "t.handler:3: MaxConcurrent= must be a positive integer, got '-1'",
                           "t.handler:6: invalid Rank= 'High': expected Owner, Default, Alternate or None",
                           "t.handler:7: invalid Role= 'Boss': expected Editor, Viewer, Shell or None",
                           "t.handler:8: expected a [Section], a comment or Key=Value, got 'garbage'"]),
    ]

    @Test(arguments: errorCases)
    func errorsRejectTheFile(_ testCase: Case) {
        let file = RegistrationParser.parse(testCase.input, path: "t.handler")
        #expect(file.registration == nil)
        #expect(file.diagnostics.map(\.description).sorted() == testCase.diagnostics.sorted())
    }

    /// Warnings leave the registration usable.
    static let warningCases: [Case] = [
        Case(name: "unknown key", input: lines("[Handler]", "Exec=/bin/true", "Foo=bar", "[DocumentType]",
                                               "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: warning: unknown key 'Foo' in section [Handler], ignored"]),
        Case(name: "X- keys and sections are silent", input: lines("[Handler]", "Exec=/bin/true", "X-Vendor=1",
                                                                   "[X-Extra]", "Anything=goes", "[DocumentType]",
                                                                   "ContentTypes=public.png", "X-Note=hi"),
             diagnostics: []),
        Case(name: "unknown section", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                   "ContentTypes=public.png", "[Service]", "Type=simple"),
             diagnostics: ["t.handler:5: warning: unknown section [Service], ignored"]),
        Case(name: "no DocumentType", input: lines("", "[Handler]", "Exec=/bin/true"),
             diagnostics: ["t.handler:2: warning: no [DocumentType] section: this handler opens no files"]),
        Case(name: "bad environment assignment", input: lines("[Handler]", "Exec=/bin/true", "Environment=1A=x",
                                                              "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: warning: invalid environment assignment '1A=x', ignored"]),
        Case(name: "misspelt [Handler] key", input: lines("[Handler]", "Exec=/bin/true", "TimeOutSec=30",
                                                          "[DocumentType]", "ContentTypes=public.png"),
             diagnostics: ["t.handler:3: warning: unknown key 'TimeOutSec' in section [Handler], ignored; "
                           + "did you mean 'TimeoutSec='?"]),
        Case(name: "misspelt [DocumentType] key", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                               "ContentTypes=public.png", "Rnak=Owner"),
             diagnostics: ["t.handler:5: warning: unknown key 'Rnak' in section [DocumentType], ignored; "
                           + "did you mean 'Rank='?"]),
        Case(name: "misspelt [ExportedType] key", input: lines("[Handler]", "Exec=/bin/true", "[DocumentType]",
                                                               "ContentTypes=com.example.a", "[ExportedType]",
                                                               "Identifier=com.example.a", "Extension=a"),
             diagnostics: ["t.handler:7: warning: unknown key 'Extension' in section [ExportedType], ignored; "
                           + "did you mean 'Extensions='?"]),
    ]

    /// The suggestion comes from the key table itself: every [Handler] key there is, misspelt by one letter's case,
    /// is suggested back (so keys added to the table are suggested without a second list to update).
    @Test func everyHandlerKeyIsSuggestedForItsMisspelling() {
        for key in RegistrationParser.handlerKeys.sorted() {
            let typo = key.prefix(1).lowercased() + key.dropFirst()
            let file = RegistrationParser.parse(lines("[Handler]", "Exec=/bin/true", "\(typo)=1", "[DocumentType]",
                                                      "ContentTypes=public.png"), path: "t.handler")
            let warning = file.diagnostics.first { $0.description.contains("unknown key '\(typo)'") }
            #expect(warning?.description.hasSuffix("did you mean '\(key)='?") == true, "\(typo)")
        }
    }

    /// A ContentTypes= word that no type declares is a warning at the line of the key, with the nearest declared
    /// identifier; found once the type database is known, and for a file with other errors too.
    @Test(arguments: [
        (lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "Name=Notes", "ContentTypes=public.plain-txt"),
         ["t.handler:5: warning: ContentTypes= names 'public.plain-txt', which no type declares; did you mean 'public.plain-text'?"]),
        (lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "Rank=Boss", "ContentTypes=public.png public.plain-txt"),
         ["t.handler:5: warning: ContentTypes= names 'public.plain-txt', which no type declares; did you mean 'public.plain-text'?"]),
        (lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "ContentTypes=com.example.own", "[ExportedType]",
               "Identifier=com.example.own"), []),
        (lines("[Handler]", "Exec=/bin/true", "[DocumentType]", "ContentTypes=com.example.zzzz-nothing-like-it"),
         ["t.handler:4: warning: ContentTypes= names 'com.example.zzzz-nothing-like-it', which no type declares"]),
    ])
    func unknownContentTypesAreWarnedAtTheirLine(_ input: [UInt8], _ expected: [String]) {
        let file = RegistrationParser.parse(input, path: "t.handler")
        #expect(file.typeReferences.unknownClaims(in: .builtin).map(\.description) == expected)
    }

    @Test(arguments: warningCases)
    func warningsKeepTheRegistration(_ testCase: Case) {
        let file = RegistrationParser.parse(testCase.input, path: "t.handler")
        #expect(file.registration != nil)
        #expect(file.diagnostics.map(\.description) == testCase.diagnostics)
    }

    @Test func repeatedSectionsMakeNewEntries() throws {
        let file = RegistrationParser.parse(lines(
            "[Handler]", "Exec=/bin/true",
            "[DocumentType]", "ContentTypes=public.png", "Rank=Owner",
            "[DocumentType]", "ContentTypes=public.image", "Rank=alternate", "Role=EDITOR",
            "[ExportedType]", "Identifier=com.example.a", "Extensions=.A",
            "[ExportedType]", "Identifier=com.example.b", "ConformsTo=com.example.a",
            "[ImportedType]", "Identifier=com.other.c"), path: "x.handler")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(registration.documentTypes.map(\.contentTypes) == [["public.png"], ["public.image"]])
        #expect(registration.documentTypes.map(\.rank) == [.owner, .alternate])
        #expect(registration.documentTypes.map(\.role) == [.viewer, .editor])
        #expect(registration.documentTypes.map(\.location.line) == [3, 6])
        #expect(registration.exportedTypes.map(\.identifier) == ["com.example.a", "com.example.b"])
        #expect(registration.exportedTypes.map(\.extensions) == [["a"], []])
        #expect(registration.importedTypes.map(\.origin) == [.imported(SourceLocation(file: "x.handler", line: 16))])
    }

    struct ValueCase: Sendable, CustomTestStringConvertible {
        let name: String
        let handlerLines: [String]
        let check: @Sendable (HandlerRegistration) -> Bool
        var testDescription: String { name }
    }

    static let valueCases: [ValueCase] = [
        ValueCase(name: "whitespace around = and CRLF", handlerLines: ["Exec = /bin/echo  a  \r", "Name =  Spaced \r"]) {
            $0.exec.arguments == ["/bin/echo", "a"] && $0.name == "Spaced"
        },
        ValueCase(name: "continuation joins with a space", handlerLines: ["Exec=/bin/echo \\", "  --flag \\", "%f"]) {
            $0.exec.arguments == ["/bin/echo", "--flag", "%f"]
        },
        ValueCase(name: "later key overrides", handlerLines: ["Exec=/bin/false", "Exec=/bin/true"]) {
            $0.exec.arguments == ["/bin/true"]
        },
        ValueCase(name: "semicolon comments", handlerLines: ["; a comment", "Exec=/bin/true"]) {
            $0.exec.arguments == ["/bin/true"]
        },
        ValueCase(name: "TimeoutSec span", handlerLines: ["Exec=/bin/true", "TimeoutSec=1min 30s"]) {
            $0.timeout == .seconds(90) && !$0.timeoutDisabled
        },
        ValueCase(name: "TimeoutSec infinity", handlerLines: ["Exec=/bin/true", "TimeoutSec=infinity"]) {
            $0.timeout == nil && $0.timeoutDisabled
        },
        ValueCase(name: "Environment accumulates", handlerLines: [
            "Exec=/bin/true", "Environment=A=1 \"B=two words\"", "Environment=C=3",
        ]) {
            $0.environment == ["A": "1", "B": "two words", "C": "3"]
        },
        ValueCase(name: "empty Environment clears", handlerLines: ["Exec=/bin/true", "Environment=A=1", "Environment=",
                                                                   "Environment=B=2"]) {
            $0.environment == ["B": "2"]
        },
        ValueCase(name: "User and Group", handlerLines: ["Exec=/bin/true", "User=viewer", "Group=media"]) {
            $0.user == "viewer" && $0.group == "media"
        },
        ValueCase(name: "byte order mark", handlerLines: ["Exec=/bin/true"]) { $0.identifier == "t" },
        ValueCase(name: "OutputLimit default", handlerLines: ["Exec=/bin/true"]) { $0.outputLimit == 1_048_576 },
        ValueCase(name: "OutputLimit size", handlerLines: ["Exec=/bin/true", "OutputLimit=64K"]) { $0.outputLimit == 65536 },
        ValueCase(name: "OutputLimit bytes", handlerLines: ["Exec=/bin/true", "OutputLimit=100"]) { $0.outputLimit == 100 },
        ValueCase(name: "OutputLimit infinity", handlerLines: ["Exec=/bin/true", "OutputLimit=infinity"]) { $0.outputLimit == nil },
        ValueCase(name: "OutputLimit reset", handlerLines: ["Exec=/bin/true", "OutputLimit=2G", "OutputLimit="]) {
            $0.outputLimit == 1_048_576
        },
    ]

    @Test(arguments: valueCases)
    func handlerValues(_ testCase: ValueCase) throws {
        let text = (["[Handler]"] + testCase.handlerLines + ["[DocumentType]", "ContentTypes=public.png"])
            .joined(separator: "\n")
        let input = testCase.name == "byte order mark" ? [0xEF, 0xBB, 0xBF] + bytes(text) : bytes(text)
        let file = RegistrationParser.parse(input, path: "/d/t.handler")
        #expect(file.diagnostics == [])
        let registration = try #require(file.registration)
        #expect(testCase.check(registration))
    }

    @Test(arguments: 0..<64)
    func garbageNeverCrashesAndAlwaysHasLocations(_ seed: Int) {
        var garbage = Garbage(state: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1)
        let input = garbage.bytes(Int(garbage.next() % 2048))
        let file = RegistrationParser.parse(input, path: "g.handler")
        #expect(file.registration == nil)
        #expect(!file.diagnostics.isEmpty)
        #expect(file.diagnostics.allSatisfy { $0.location.file == "g.handler" && $0.location.line >= 1 })
    }

    @Test func exactlyTheMaximumSizeIsRead() {
        let text = bytes("[Handler]\nExec=/bin/true\n[DocumentType]\nContentTypes=public.png\n")
        let padded = text + [UInt8](repeating: UInt8(ascii: "#"), count: RegistrationParser.maximumSize - text.count)
        #expect(RegistrationParser.parse(padded, path: "t.handler").registration != nil)
    }
}
