package import CohortCore

/// The roster's identifiers collected one participant at a time, for a ``Scrubber`` or a
/// ``ResidualScanner``: a roster read through a store cursor never has to be held whole, and
/// only the compiled index outlives the collection.
package struct RosterIdentifiers: Sendable {
    /// What the identifiers are collected for (the two match differently, see ``Scrubber`` and
    /// ``ResidualScanner``).
    package enum Purpose: Sendable {
        case scrubber
        case scanner
    }

    var source: IdentifierIndex.Source
    /// Participants added so far.
    public private(set) var count = 0

    /// An empty collection for `purpose`.
    package init(for purpose: Purpose) {
        source = IdentifierIndex.Source(mode: purpose == .scrubber ? .scrubber : .scanner)
    }

    /// The identifiers of everyone on `roster`, for `purpose`.
    package init(for purpose: Purpose, roster: [Participant]) {
        self.init(for: purpose)
        for participant in roster { add(participant) }
    }

    /// Adds `participant`'s identifiers (a participant without a decrypted identity adds only
    /// their study code).
    public mutating func add(_ participant: Participant) {
        source.add(participant)
        count += 1
    }

    /// The compiled index (the collection's phrase table is released when `self` is).
    consuming func compiled(for mode: IdentifierIndex.Mode) -> IdentifierIndex {
        precondition(source.mode == mode, "identifiers collected for another purpose")
        source.finish()
        return IdentifierIndex(source)
    }
}
