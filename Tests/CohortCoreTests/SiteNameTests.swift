import CohortCore
import Foundation
import Testing

/// Site names: the alphabet PostgreSQL role names are made from, and never a published field.
struct SiteNameTests {
    @Test(arguments: ["site-a", "charite_berlin", "s1", String(repeating: "z", count: 64)])
    func validNames(name: String) throws {
        #expect(SiteName.isValid(name))
        #expect(try SiteName.parse("  \(name) ") == name)
    }

    @Test(arguments: ["Site-A", "site a", "site.a", "sité", "a;b", String(repeating: "z", count: 65)])
    func invalidNamesNameTheFieldNotTheValue(name: String) throws {
        #expect(!SiteName.isValid(name))
        do {
            _ = try SiteName.parse(name, file: "roster.csv", line: 4)
            Issue.record("accepted \(name)")
        } catch let error as CohortError {
            #expect(error.code == .invalidInput)
            #expect(error.location == .init(file: "roster.csv", line: 4, field: "site"))
            #expect(!error.message.contains(name))
        }
    }

    @Test func emptyMeansNoSite() throws {
        #expect(try SiteName.parse(nil) == nil)
        #expect(try SiteName.parse("  ") == nil)
    }

    /// A protocol cannot publish the site per participant: `participant.site` is no field a
    /// de-identification rule may name, so the protocol is refused at load.
    @Test func aProtocolRuleCannotPublishTheSite() throws {
        let url = repositoryRoot.appendingPathComponent("protocols/minimal.yaml")
        let text = try String(contentsOf: url, encoding: .utf8)
            .replacingOccurrences(of: "    participant.status: keep\n", with: "    participant.status: keep\n    participant.site: keep\n")
        #expect(text.contains("participant.site: keep"))
        do {
            _ = try ProtocolLoader.parse(text, file: "site.yaml", templateRoot: repositoryRoot)
            Issue.record("a rule publishing the site was accepted")
        } catch {
            #expect("\(error)".contains("unknown field 'site' of participant"), "\(error)")
        }
    }
}
