import InboxCore
import Testing

/// The mount table and the words of a sandbox finding: what the agent says when its unit's sandbox makes a path
/// read-only, hides it or keeps it private.
struct ServicePathsTests {
    static let mountinfo = """
        22 27 0:21 / /proc rw,relatime - proc proc rw
        27 1 259:2 / / ro,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
        30 27 259:2 /var/lib/inboxd /var/lib/inboxd rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
        31 27 0:40 /systemd-private-3f2a-inboxd.service-Xb1Q/tmp /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw
        32 27 259:3 / /srv/read\\040only rw master:7 - ext4 /dev/sdb1 ro
        garbage line
        33 27 0:41 / /mnt/short rw
        """

    @Test func theMountTableKeepsIdRootMountPointAndReadOnly() {
        let table = MountTable.parse(Self.mountinfo)
        #expect(table.mounts.count == 5, "the two lines without the fields are left out")
        #expect(table.mount(id: 27) == MountTable.Mount(id: 27, root: "/", mountPoint: "/", fileSystem: "ext4", readOnly: true))
        #expect(table.mount(id: 30)?.readOnly == false, "a bind mount made writable under a read-only /")
        #expect(table.mount(id: 31)?.isPrivateTemporary == true)
        #expect(table.mount(id: 30)?.isPrivateTemporary == false)
        // Read-only by its superblock, mounted rw; an escaped space in its mount point.
        #expect(table.mount(id: 32)?.readOnly == true)
        #expect(table.mount(id: 32)?.mountPoint == "/srv/read only")
        #expect(table.mount(id: 99) == nil)
    }

    @Test func theUnitComesFromTheUnifiedControlGroup() {
        #expect(ServiceUnit.parse(cgroup: "0::/system.slice/inboxd.service\n")
                == ServiceUnit(name: "inboxd.service", user: false))
        #expect(ServiceUnit.parse(cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/inboxd.service\n")
                == ServiceUnit(name: "inboxd.service", user: true))
        #expect(ServiceUnit.parse(cgroup: "0::/user.slice/user-1000.slice/session-3.scope\n") == nil, "run by hand")
        #expect(ServiceUnit.parse(cgroup: "0::/user.slice/user-1000.slice/user@1000.service\n") == nil,
                "the user manager itself")
        #expect(ServiceUnit.parse(cgroup: "1:name=systemd:/system.slice/inboxd.service\n") == nil,
                "only the unified hierarchy is read")
        #expect(ServiceUnit(name: "inboxd.service", user: true).systemctl == "systemctl --user")
    }

    static let unit = ServiceUnit(name: "inboxd.service", user: false)

    @Test func aReadOnlyGrantNamesThePathAndTheDropIn() {
        let finding = ServicePathFinding(setting: "ReadWritePaths=/var/lib/slowlog", path: "/var/lib/slowlog",
                                         problem: .readOnly(mountPoint: "/"),
                                         consequence: "org.upg.slow cannot write there", byHandler: true)
        #expect(finding.message(unit: Self.unit) == "ReadWritePaths=/var/lib/slowlog is read-only where inboxd.service "
                + "runs (its sandbox mounts / read-only), and handlers run inside that sandbox: org.upg.slow cannot "
                + "write there. Let the service write it with a drop-in: `systemctl edit inboxd.service`, add "
                + "`[Service]` and `ReadWritePaths=/var/lib/slowlog`, then `systemctl restart inboxd.service`")
        let user = finding.message(unit: ServiceUnit(name: "inboxd.service", user: true))
        #expect(user.contains("`systemctl --user edit inboxd.service`"))
        let byHand = finding.message(unit: nil)
        #expect(byHand.contains("the mount at / is read-only in the agent's mount namespace"))
        #expect(!byHand.contains("systemctl"), "no unit, no drop-in")
    }

    @Test func anAbsentPathSaysWhereToLook() {
        let hidden = ServicePathFinding(setting: "ReadWritePaths=/srv/log", path: "/srv/log",
                                        problem: .absent(readOnlyParent: "/"), consequence: "x cannot write there",
                                        byHandler: true)
        let text = hidden.message(unit: Self.unit)
        #expect(text.hasPrefix("ReadWritePaths=/srv/log does not exist where inboxd.service runs: x cannot write there, "
                               + "and it cannot be made there (the mount at / is read-only there)"))
        #expect(text.contains("`systemctl cat inboxd.service`"))
        #expect(text.contains("`ReadWritePaths=/srv/log`"))
        let makeable = ServicePathFinding(setting: "Inbox=/srv/in", path: "/srv/in", problem: .absent(readOnlyParent: nil),
                                          consequence: "nothing dropped there reaches the agent")
        #expect(!makeable.message(unit: Self.unit).contains("ReadWritePaths="), "it can be made: no drop-in needed")
        #expect(makeable.message(unit: nil).hasSuffix("Create it, then reload the agent"))
    }

    @Test func aPrivateTemporaryDirectoryIsSaidToBeTheServicesOwn() {
        let finding = ServicePathFinding(setting: "Inbox=/tmp/drop", path: "/tmp/drop",
                                         problem: .privateTemporary(mountPoint: "/tmp"), consequence: "")
        let text = finding.message(unit: Self.unit)
        #expect(text.hasPrefix("Inbox=/tmp/drop is in inboxd.service's own /tmp (PrivateTmp=)"))
        #expect(text.contains("Use a directory outside /tmp"))
    }
}
