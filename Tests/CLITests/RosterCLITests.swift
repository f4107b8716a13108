import Foundation
import Testing

/// `participant import`: a roster with problems is refused whole, and every problem is named.
@Suite(.serialized)
struct RosterCLITests {
    /// Every bad line of the roster is reported at once (file, line, field — no value), in line
    /// order, and nothing is enrolled; the exit code is that of an input error (3).
    @Test func rosterImportReportsEveryProblemAtOnce() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let day = CLI.day(-3)
        let body = CLI.rosterHeader
            + "P-1,Ann Lee,,,1980-02-30,female,,,,Europe/Berlin,\(day),\n"  // line 2: birth_date
            + "P-2,Bob Lee,,,1981-01-01,male,,,,Europe/Berlin,\(day),\n"  // line 3: good
            + "P-3,Cy Lee,,,1982-01-01,female,,,,Mars/Olympus,\(day),\n"  // line 4: time_zone
            + "P-4,Di Lee,too,many,fields\n"  // line 5: field count
            + "P-2,Ed Lee,,,1983-01-01,male,,,,UTC,\(day),\n"  // line 6: code twice
            + "P-6,Flo Lee,flo-at-example,,1984-01-01,female,,,,UTC,\(day),\n"  // line 7: email
        let r = try cli.ws("participant", "import", try cli.write("roster.csv", body))
        #expect(r.status == 3, "\(r.output)")
        #expect(r.stderr.contains("5 problems in the roster; nothing was enrolled"), "\(r.stderr)")
        let expected = [":2: birth_date", ":4: time_zone", ":5: expected 12 fields", ":6: code", ":7: email"]
        var previous = r.stderr.startIndex
        for location in expected {
            let found = try #require(r.stderr.range(of: "roster.csv" + location), "\(location) missing: \(r.stderr)")
            #expect(found.lowerBound >= previous, "\(location) out of line order")
            previous = found.lowerBound
        }
        #expect(try cli.count("participants") == 0)
        for value in ["Ann Lee", "1980-02-30", "Mars/Olympus", "flo-at-example", "too"] {
            #expect(!r.stderr.contains(value), "\(value) echoed: \(r.stderr)")
        }
    }

    /// A control character inside a field (a NUL byte in a name, an escape in an address) is
    /// refused naming line and field, never echoed: printed raw it would corrupt a terminal or
    /// a table (issue 30 found a NUL printed by `participant list --show-identifiers`).
    @Test func controlCharactersInAFieldAreRefused() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let day = CLI.day(-3)
        let body = CLI.rosterHeader + "P-1,Ann\u{0}Lee,,,1980-01-01,female,,,,UTC,\(day),\n"
            + "P-2,Bob Lee,,,1981-01-01,male,1 Elm\u{1B}[2J St,,,UTC,\(day),\n" + "P-3,Cy Lee,,,1982-01-01,female,,,,UTC,\(day),\n"
        let r = try cli.ws("participant", "import", try cli.write("roster.csv", body))
        #expect(r.status == 3, "\(r.output)")
        #expect(r.stderr.contains("roster.csv:2: name") && r.stderr.contains("roster.csv:3: address"), "\(r.stderr)")
        #expect(r.stderr.contains("control characters"), "\(r.stderr)")
        #expect(!r.stderr.contains("\u{0}") && !r.stderr.contains("\u{1B}") && !r.stderr.contains("Ann") && !r.stderr.contains("Elm"), "\(r.stderr)")
        #expect(try cli.count("participants") == 0)
    }

    /// A roster with many bad lines lists the first 50 and says how many more there are.
    @Test func manyProblemsAreCappedWithACount() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        var body = CLI.rosterHeader
        for i in 1...60 { body += "P-\(i),Person \(i),,,1980-01-01,female,,,,Nowhere/Atlantis,\(CLI.day(-3)),\n" }
        let r = try cli.ws("participant", "import", try cli.write("roster.csv", body))
        #expect(r.status == 3)
        #expect(r.stderr.contains("60 problems in the roster"), "\(r.stderr)")
        #expect(r.stderr.contains("roster.csv:51: time_zone") && !r.stderr.contains("roster.csv:52: time_zone"), "\(r.stderr.suffix(400))")
        #expect(r.stderr.contains("… and 10 more"), "\(r.stderr.suffix(400))")
    }

    /// Sex "X" is not guessed: the line is refused with the two choices that say what is meant;
    /// "other" and "unknown" enroll.
    @Test func sexXIsRefusedWithTheChoices() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let refused = try cli.ws(
            "participant", "import", try cli.write("roster.csv", CLI.rosterHeader + "P-1,Ann Lee,,,1980-01-01,X,,,,UTC,\(CLI.day(-3)),\n"))
        #expect(refused.status == 3, "\(refused.output)")
        #expect(refused.stderr.contains("roster.csv:2: sex"), "\(refused.stderr)")
        #expect(refused.stderr.contains("ambiguous") && refused.stderr.contains("write other or unknown"), "\(refused.stderr)")
        #expect(try cli.count("participants") == 0)
        let accepted = try cli.ws(
            "participant", "import",
            try cli.write(
                "roster2.csv",
                CLI.rosterHeader + "P-1,Ann Lee,,,1980-01-01,other,,,,UTC,\(CLI.day(-3)),\nP-2,Bo Lee,,,1980-01-01,unknown,,,,UTC,\(CLI.day(-3)),\n"))
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(try cli.count("participants") == 2)
    }
}
