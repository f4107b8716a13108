// A test-only executable: `cohort export` held after its snapshot, so that an end-to-end test
// can let another process act at that moment (ExportIntegrityCLITests: a withdrawal during an
// export, two exports holding their names at once). It is not a product and is never installed;
// the hook it sets (`ExportOptions.afterSnapshot`) is package-internal, so `cohort` itself reads
// no test hook from its environment.
//
// Usage: cohort-export-paused GATE --recipient NAME --out DIR -w WORKSPACE
// After its snapshot the export creates GATE.ready, then waits until GATE exists (at most 120 s).
// Errors are printed as `cohort` prints them ("error: …" on stderr); the exit status is 1.

import CohortCore
import CohortKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The value after `flag` in `arguments`, nil when absent.
func value(of flag: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Creates `<gate>.ready`, then waits until `gate` exists, at most 120 seconds.
func pause(at gate: String) {
    _ = FileManager.default.createFile(atPath: gate + ".ready", contents: nil)
    let deadline = Date().addingTimeInterval(120)
    while !FileManager.default.fileExists(atPath: gate) && Date() < deadline {
        usleep(20_000)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

/// Runs the export the arguments describe, held after its snapshot at the gate they name.
func run() -> Never {
    umask(0o077)
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.count == 7, let recipient = value(of: "--recipient", in: arguments), let out = value(of: "--out", in: arguments),
        let directory = value(of: "-w", in: arguments)
    else {
        fail("usage: cohort-export-paused GATE --recipient NAME --out DIR -w WORKSPACE")
    }
    let gate = arguments[0]
    var options = ExportOptions(recipient: recipient, outDirectory: URL(fileURLWithPath: out))
    options.afterSnapshot = { pause(at: gate) }
    do {
        let workspace = try Workspace.openForCommand(
            at: URL(fileURLWithPath: directory), actor: Workspace.actorName(explicit: nil), readOnly: false,
            environment: ProcessInfo.processInfo.environment, onWaiting: nil)
        _ = try ExportJob(workspace: workspace, options: options).run()
    } catch let error as CohortError {
        fail(error.description)
    } catch {
        fail("\(error)")
    }
    exit(0)
}

run()
