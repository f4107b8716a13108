package import CohortCore
import CohortCrypto
package import Foundation

/// The audit chain's rules, shared by both stores: how the next event is computed from the head,
/// and how a stored chain is verified. No SQL here; each store reads its rows and hands them over.
package enum AuditChain {
    /// The event that follows `head` (nil: the chain is empty): its number, link and hash.
    /// `actor` and `details` are the committed values (redactable texts already references).
    package static func next(
        after head: (seq: Int64, hash: String)?, at: String, actor: String, action: String, subject: String?, details: [String: String]
    ) throws -> AuditEvent {
        let seq = (head?.seq ?? 0) + 1
        let prev = head?.hash ?? AuditEvent.genesisHash
        let input = try AuditEvent.hashInput(seq: seq, at: at, actor: actor, action: action, subject: subject, details: details, prevHash: prev)
        return AuditEvent(seq: seq, at: at, actor: actor, action: action, subject: subject, details: details, prevHash: prev, hash: SHA256.hex(input))
    }

    /// The details as stored: canonical JSON (sorted keys), the text the hash input embeds.
    package static func detailsJSON(_ details: [String: String]) throws -> String {
        String(decoding: try CanonicalJSON.encode(details), as: UTF8.self)
    }

    /// The instant as events carry it: UTC, ISO 8601 with milliseconds.
    package static func instant(_ date: Date) -> String { Timestamp(date, in: .gmt).iso8601 }

    /// One stored event row, as a store read it.
    package enum StoredEvent {
        /// A row that decoded.
        case event(AuditEvent)
        /// A row that did not decode: its seq when that column was readable, and what is wrong
        /// ("its details are not valid JSON").
        case malformed(seq: Int64?, problem: String)
    }

    /// One stored event row as ``verify(nextEvent:checkpoints:eventHash:signers:)`` takes it,
    /// read through either store's reader: the event, or what is wrong with the row (its seq
    /// when that column is readable). `detailsColumn` holds the committed details.
    package static func storedEvent(_ row: some ColumnReader, detailsColumn: String = "details") -> StoredEvent {
        do {
            return .event(try AuditEventRow(row, detailsColumn: detailsColumn).event)
        } catch let error as CohortError {
            return .malformed(seq: try? row.int64("seq"), problem: problem(decoding: error))
        } catch {
            return .malformed(seq: try? row.int64("seq"), problem: "a column is malformed")
        }
    }

    /// What ``StoredEvent/malformed(seq:problem:)`` says of a row that failed to decode with
    /// `error` (branching on its typed cause: the column, never the message text).
    package static func problem(decoding error: CohortError) -> String {
        if case let .malformedColumn(_, column)? = error.cause, column == "details" || column == "details_text" {
            return "its details are not valid JSON"
        }
        return "a column is malformed"
    }

    /// One stored checkpoint row: the checkpoint, or nil when the row did not decode.
    package typealias StoredCheckpoint = AuditCheckpoint?

    /// Recomputes every hash and link of the events `nextEvent` yields (in storage order, until
    /// nil), then checks each checkpoint's signature and that the event it covers has the
    /// signed hash (`eventHash(seq)`), naming the first problem. Streams: one event in memory
    /// at a time. Redactable texts are not needed (the chain commits to their salted hashes).
    package static func verify(
        nextEvent: () throws -> StoredEvent?, checkpoints: [StoredCheckpoint], eventHash: (Int64) throws -> String?,
        signers: CheckpointSigners
    ) throws -> AuditVerification {
        var expectedSeq: Int64 = 1
        var prev = AuditEvent.genesisHash
        var count = 0
        var problem: String?
        var brokenAt: Int64?
        var lastSeq: Int64 = 0
        while let stored = try nextEvent() {
            count += 1
            let event: AuditEvent
            switch stored {
            case let .event(e):
                event = e
                lastSeq = e.seq
            case let .malformed(seq, what):
                let seq = seq ?? lastSeq + 1
                lastSeq = seq
                if problem == nil {
                    problem = "event \(seq): \(what) (edited?)"
                    brokenAt = seq
                }
                continue
            }
            guard problem == nil else { continue }
            let seq = event.seq
            if seq != expectedSeq {
                problem = seq > expectedSeq
                    ? "event \(expectedSeq) is missing (deleted?): the chain jumps from \(expectedSeq - 1) to \(seq)"
                    : "event \(seq) is out of order (reordered or duplicated?)"
                brokenAt = min(seq, expectedSeq)
                continue
            }
            if event.prevHash != prev {
                problem = "event \(seq): its previous-hash does not link to event \(seq - 1) (an earlier event was changed or removed)"
                brokenAt = seq
                continue
            }
            let input = try AuditEvent.hashInput(
                seq: seq, at: event.at, actor: event.actor, action: event.action, subject: event.subject, details: event.details, prevHash: prev)
            let hash = SHA256.hex(input)
            if hash != event.hash {
                problem = "event \(seq): its content does not match its hash (edited?)"
                brokenAt = seq
                continue
            }
            prev = hash
            expectedSeq += 1
        }
        var checked = 0
        var signatureFailed = false
        for stored in checkpoints {
            checked += 1
            guard problem == nil else { break }
            guard let cp = stored else {
                problem = "a checkpoint row is malformed (edited?)"
                break
            }
            if signers.signer(of: cp) == nil {
                problem = signers.revocationProblem(of: cp).map { "checkpoint at event \(cp.seq): \($0)" }
                    ?? (signers.signers.count == 1
                    ? "checkpoint at event \(cp.seq): its signature does not verify with the study key"
                    : "checkpoint at event \(cp.seq): its signature is by no key the trail registered before that event")
                brokenAt = cp.seq
                signatureFailed = true
                break
            }
            guard let hash = try eventHash(cp.seq) else {
                problem = "event \(cp.seq) is missing: a signed checkpoint covers it (events after \(lastSeq) were deleted?)"
                brokenAt = cp.seq
                break
            }
            if hash != cp.headHash {
                problem = "event \(cp.seq): differs from the signed checkpoint of the chain at that point"
                brokenAt = cp.seq
                break
            }
        }
        var verification = AuditVerification(
            events: count, checkpoints: checked, headSeq: lastSeq, headHash: prev, firstProblem: problem,
            brokenAtSeq: brokenAt)
        verification.checkpointSignatureFailed = signatureFailed
        return verification
    }
}
