import CohortCore
import Testing

@testable import CohortExport

struct ResourceIDTests {
    /// Pinned by the implementation before the reusable builder: ids must never change, or a
    /// recipient's resources would get new ids between exports.
    @Test func idsArePinned() {
        #expect(ResourceID.make(["Patient", "study", "PSEUDONYM"]) == "c7e728ae-a38b-595c-b4b5-644cbc384e15")
        #expect(ResourceID.make([]) == "713c5c0b-46c5-5caa-ac85-55138fdf22d3")
    }

    /// The builder, reused across ids, gives what `make` gives for the same parts.
    @Test func builderMatchesMake() {
        let builder = ResourceID.Builder()
        let instants: [Timestamp?] = [
            nil, Timestamp(epochMilliseconds: 1_741_937_400_000, utcOffsetSeconds: 3600),
            Timestamp(epochMilliseconds: -86_400_001, utcOffsetSeconds: -19_800),
        ]
        for (ordinal, start) in instants.enumerated() {
            for end in instants {
                builder.append("Observation")
                builder.append("study-1")
                builder.append("K7QF2M4XRB6TNV3D")
                builder.append("heart_rate")
                builder.append(start)
                builder.append(end)
                builder.append(ordinal - 1)
                let built = builder.make()
                let made = ResourceID.make([
                    "Observation", "study-1", "K7QF2M4XRB6TNV3D", "heart_rate", start?.iso8601 ?? "", end?.iso8601 ?? "", String(ordinal - 1),
                ])
                #expect(built == made)
            }
        }
        builder.append("a")
        builder.append("b")
        #expect(builder.make() == ResourceID.make(["a", "b"]))
        #expect(builder.make() == ResourceID.make([]))
    }
}
