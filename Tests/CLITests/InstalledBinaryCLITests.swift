import Foundation
import Testing

/// cohort carries its example protocols and templates inside the binary: an installed copy works
/// from any folder, and the working directory never changes an export's bytes.
@Suite(.serialized) struct InstalledBinaryCLITests {
    /// A copy of the built binary in `<tmp>/prefix/bin`, outside the repository.
    static func installedCopy(in cli: CLI) throws -> URL {
        let bin = cli.directory.appendingPathComponent("prefix/bin", isDirectory: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("cohort")
        // Copied by cp in its own process: copied here, the file's write descriptor would be
        // inherited by any process another test forks meanwhile, and running the copy would then
        // fail with "Text file busy" (ETXTBSY) until that child execs.
        let (status, out) = try CLI.tool("/bin/cp", [CLI.binary.path, copy.path])
        try #require(status == 0, "cp: \(out)")
        return copy
    }

    @Test func installedCopyRunsTheDemoAndWritesTheExamplesOutsideTheRepository() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let binary = try Self.installedCopy(in: cli)
        let elsewhere = cli.directory.appendingPathComponent("elsewhere", isDirectory: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        #expect(!elsewhere.path.hasPrefix(CLI.repoRoot.path))

        let examples = try cli.run(["protocol", "examples", "--out", "."], in: elsewhere, binary: binary)
        #expect(examples.status == 0, "\(examples.output)")
        for path in ["protocols/axspa-wearables.yaml", "protocols/minimal.yaml", "templates/export-readme.mustache"] {
            let written = try Data(contentsOf: elsewhere.appendingPathComponent(path))
            #expect(written == (try Data(contentsOf: CLI.repoRoot.appendingPathComponent(path))), "\(path)")
        }
        let again = try cli.run(["protocol", "examples", "--out", "."], in: elsewhere, binary: binary)
        #expect(again.status != 0 && again.output.contains("--force"), "existing files are not replaced without --force")
        let initialized = try cli.run(["init", "--dir", "ws", "--protocol", "protocols/minimal.yaml"], in: elsewhere, binary: binary)
        #expect(initialized.status == 0, "\(initialized.output)")

        let demo = try cli.run(["demo", "--dir", "demo", "--participants", "6"], in: elsewhere, binary: binary)
        #expect(demo.status == 0, "\(demo.output)")
        #expect(demo.stdout.contains("verify           passed"))
    }

    /// libpq is loaded when a PostgreSQL store is opened, not linked: the binary does not need
    /// it (or Kerberos, LDAP, GnuTLS, which it pulls in) to start, and SQLite work never maps it
    /// (about 3 MB less resident memory in every export; issue 28).
    @Test func theBinaryDoesNotLinkThePostgreSQLClientLibrary() throws {
        for binary in [CLI.binary, BenchCLITests.binary] {
            let (status, linked) = try CLI.tool("/usr/bin/ldd", [binary.path])
            try #require(status == 0, "ldd: \(linked)")
            #expect(linked.contains("libc.so"), "ldd lists the libraries: \(linked)")
            for library in ["libpq", "libgnutls", "libkrb5", "libldap"] {
                #expect(!linked.contains(library), "\(binary.lastPathComponent) links \(library)")
            }
        }
    }

    @Test func exportsAreByteIdenticalFromAnyWorkingDirectory() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let demo = try cli.run(["demo", "--dir", cli.path("demo"), "--participants", "6"])
        try #require(demo.status == 0, "\(demo.output)")
        let workspace = cli.path("demo")
        var digests: [String] = []
        for (index, directory) in [CLI.repoRoot, cli.directory, URL(fileURLWithPath: "/")].enumerated() {
            let out = cli.path("out-\(index)")
            let r = try cli.run(
                ["export", "--recipient", "Lab A", "--out", out, "--created-at", "2026-11-01T00:00:00Z", "-w", workspace], in: directory)
            try #require(r.status == 0, "\(r.output)")
            let names = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".tar.gz") }
            try #require(names.count == 1, "\(names)")
            let archive = out + "/" + names[0]
            let (status, sum) = try CLI.tool("/usr/bin/sha256sum", [archive])
            #expect(status == 0)
            digests.append(String(sum.prefix(64)))
        }
        #expect(Set(digests).count == 1, "the working directory must not change the archive: \(digests)")
    }
}
