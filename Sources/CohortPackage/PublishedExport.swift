/// The three files of a published export.
package struct PublishedExport: Sendable, Hashable {
    /// The archive, with its digest and size.
    public var archive: ArchiveResult
    /// The manifest and signature.
    public var signed: SignedManifest

    /// A published export as given.
    package init(archive: ArchiveResult, signed: SignedManifest) {
        self.archive = archive
        self.signed = signed
    }
}
