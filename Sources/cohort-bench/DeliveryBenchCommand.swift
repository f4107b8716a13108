import ArgumentParser
import CohortCrypto
import CohortDelivery
import Foundation

extension CohortBench {
    /// `cohort-bench delivery`: encrypt + deliver one archive the way `cohort export --encrypt-to`
    /// and `cohort deliver` do, against `openssl cms -encrypt` and OpenSSH's `sftp` on the same
    /// file, in turn, in the same run.
    struct Delivery: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delivery",
            abstract: "Time encrypt + deliver of an archive against openssl cms -encrypt and sftp put, in the same run.",
            discussion: """
                Each run, in turn: cohort's CMS encryption (AuthEnvelopedData, AES-256-GCM, to --encrypt-to) of --archive, \
                then `openssl cms -encrypt -aes-256-gcm -stream` of the same file to the same certificate; cohort's SFTP \
                delivery of the encrypted file (upload, then a second connection that reads it back and compares its \
                SHA-256, then the rename) into --to/cohort-N, then `sftp -b` putting the openssl file into --to/sftp-N \
                (upload only), and the same put followed by a `get` of the file in a second session (upload + read back, like \
                cohort). Prints MB/s per step (median of --runs) and the ratios. Nothing is cleaned on the server.

                Example (bench M's archive, a local test server):
                  cohort-bench delivery --archive /tmp/bench/exports/X.tar.gz \\
                    --encrypt-to lab-cert.pem --to sftp://me@127.0.0.1:2222/srv/inbox \\
                    --known-hosts known_hosts --identity id_ed25519
                """)

        @Option(help: "The archive to encrypt and deliver.") var archive: String
        @Option(help: "Recipient certificate (PEM).") var encryptTo: String
        @Option(help: "sftp://USER@HOST[:PORT]/PATH") var to: String
        @Option(help: "Pinned known-hosts file.") var knownHosts: String
        @Option(help: "Private key to log in with.") var identity: String
        @Option(help: "Runs per step (the median is reported).") var runs = 3

        func run() throws {
            let destination = try SFTPDestination(parsing: to)
            let certificate = try RecipientCertificate(path: encryptTo)
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-bench-delivery-\(getpid())")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let size = Double((try FileManager.default.attributesOfItem(atPath: archive)[.size] as? NSNumber)?.intValue ?? 0)
            var times: [String: [Double]] = [:]
            func timed(_ name: String, _ body: () throws -> Void) rethrows {
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                times[name, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            for run in 1...runs {
                let ours = work.appendingPathComponent("cohort-\(run).tar.gz.p7m").path
                let theirs = work.appendingPathComponent("openssl-\(run).tar.gz.p7m").path
                try timed("encrypt cohort") { try CMSEnvelope.encrypt(input: archive, output: ours, to: [certificate]) }
                try timed("encrypt openssl") {
                    var arguments = ["cms", "-encrypt", "-aes-256-gcm", "-stream", "-binary", "-outform", "DER", "-in", archive, "-out", theirs, "-recip", encryptTo]
                    if certificate.keyKind == .rsa { arguments += ["-keyopt", "rsa_padding_mode:oaep", "-keyopt", "rsa_oaep_md:sha256"] }
                    try Self.tool("openssl", arguments)
                }
                let (sha256, bytes) = try SHA256Hasher.digest(ofFile: ours)
                var target = destination
                target.path = destination.path + "/cohort-\(run)"
                try timed("deliver cohort") {
                    _ = try SFTPDelivery.deliver(
                        [DeliveryFile(name: "x.tar.gz.p7m", localPath: ours, sha256: sha256, size: bytes)], to: target, knownHosts: knownHosts, identity: identity)
                }
                let batch = work.appendingPathComponent("batch-\(run)").path
                let folder = (destination.fromHome ? "" : destination.path) + (destination.fromHome && !destination.path.isEmpty ? destination.path : "") + "/sftp-\(run)"
                try "-mkdir \(folder.hasPrefix("/") ? folder : String(folder.dropFirst()))\nput \(theirs) \(folder.hasPrefix("/") ? folder : String(folder.dropFirst()))/x.tar.gz.p7m\n"
                    .write(toFile: batch, atomically: true, encoding: .utf8)
                let sftp = ["-q", "-P", String(destination.port), "-i", identity, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                    "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null"]
                let login = "\(destination.user)@\(destination.host)"
                try timed("deliver sftp") { try Self.tool("sftp", sftp + ["-b", batch, login]) }
                // The like-for-like reference: the same upload, then the file fetched back in a second session.
                let back = work.appendingPathComponent("back-\(run)").path
                let getBatch = work.appendingPathComponent("get-\(run)").path
                let remote = folder.hasPrefix("/") ? folder : String(folder.dropFirst())
                try "get \(remote)/x.tar.gz.p7m \(back)\n".write(toFile: getBatch, atomically: true, encoding: .utf8)
                try timed("sftp put+get") {
                    try Self.tool("sftp", sftp + ["-b", batch, login])
                    try Self.tool("sftp", sftp + ["-b", getBatch, login])
                }
            }
            func median(_ name: String) -> Double {
                let sorted = (times[name] ?? [0]).sorted()
                return sorted[sorted.count / 2]
            }
            let mb = size / 1_048_576
            print("archive \(String(format: "%.1f", mb)) MiB, \(runs) run(s), medians:")
            for name in ["encrypt cohort", "encrypt openssl", "deliver cohort", "deliver sftp", "sftp put+get"] {
                print("  \(name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(String(format: "%7.3f s  %7.1f MB/s", median(name), mb / median(name)))")
            }
            let ours = median("encrypt cohort") + median("deliver cohort"), theirs = median("encrypt openssl") + median("deliver sftp")
            print(String(format: "  encrypt ratio %.2f×; deliver ÷ sftp put %.2f× (cohort also reads back); deliver ÷ sftp put+get %.2f×",
                median("encrypt cohort") / median("encrypt openssl"), median("deliver cohort") / median("deliver sftp"),
                median("deliver cohort") / median("sftp put+get")))
            print(String(format: "  encrypt+deliver %.2f× openssl cms + sftp put (%.1f vs %.1f MB/s)", ours / theirs, mb / ours, mb / theirs))
        }

        static func tool(_ name: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [name] + arguments
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw ValidationError("\(name) failed with status \(process.terminationStatus)") }
        }
    }
}
