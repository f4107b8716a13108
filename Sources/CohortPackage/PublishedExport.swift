/// The three files of a published export.
public struct PublishedExport: Sendable, Hashable {
    /// The archive, with its digest and size.
    public var archive: ArchiveResult
    /// The manifest and signature.
    public var signed: SignedManifest

    /// A published export as given.
    public init(archive: ArchiveResult, signed: SignedManifest) {
        self.archive = archive
        self.signed = signed
    }
}
