import CLibXML2
import Foundation
import CohortCore

/// One element's start as the SAX parser reports it: its local name and attributes as UTF-8
/// byte slices into libxml2's buffers, valid only while the callback runs.
package struct XMLElementStart {
    /// The local name (`Record`).
    package let name: UnsafeBufferPointer<UInt8>
    /// libxml2's attribute array: 5 pointers per attribute (local name, prefix, URI, value start, value end).
    let attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int
    /// The line the element starts on.
    public let line: Int

    /// The value of the attribute named `key` (ASCII), nil when absent.
    package func value(_ key: StaticString) -> UnsafeBufferPointer<UInt8>? {
        guard let attributes else { return nil }
        let keyLength = key.utf8CodeUnitCount
        let keyStart = key.utf8Start
        for i in 0..<count {
            guard let localName = attributes[5 * i] else { continue }
            if strncmp(localName, keyStart, keyLength) == 0, localName[keyLength] == 0,
                let start = attributes[5 * i + 3], let end = attributes[5 * i + 4]
            {
                return UnsafeBufferPointer(start: start, count: end - start)
            }
        }
        return nil
    }

    /// Whether the element's name is `name` (ASCII).
    public func named(_ name: StaticString) -> Bool {
        guard name.utf8CodeUnitCount == self.name.count, let base = self.name.baseAddress else { return false }
        return memcmp(name.utf8Start, base, self.name.count) == 0
    }
}

/// A streaming (SAX) XML parser over libxml2's push parser: bytes are fed in chunks of any size
/// and element starts and ends are reported as they are read, so memory stays flat whatever the
/// document's size — no tree is ever built.
///
/// Hardened for files from outside: no entity substitution, no network, no external DTD or
/// entity loading (the Health app's export.xml carries an internal DTD, which is parsed but not
/// acted on); libxml2's own limits against entity amplification stay on. Errors name the file,
/// line and column and libxml2's error number, never the document's text.
///
/// Not `Sendable`: one parser per thread.
package final class XMLStreamParser {
    /// Called for each element start; a thrown error stops the parse and is rethrown by `feed`.
    package typealias StartHandler = (XMLElementStart) throws -> Void
    /// Called for each element end with its local name.
    package typealias EndHandler = (UnsafeBufferPointer<UInt8>) throws -> Void

    private var context: xmlParserCtxtPtr?
    private let name: String
    private let onStart: StartHandler
    private let onEnd: EndHandler
    /// The first error a handler threw (libxml2 is stopped and the error rethrown).
    private var handlerError: (any Error)?

    /// libxml2's global state, set up once per process before any parser (its rule for threads).
    private static let libraryReady: Bool = {
        xmlInitParser()
        return true
    }()

    /// A parser for the document called `name` in errors.
    package init(name: String, onStart: @escaping StartHandler, onEnd: @escaping EndHandler = { _ in }) throws {
        _ = Self.libraryReady
        self.name = name
        self.onStart = onStart
        self.onEnd = onEnd
        var handler = xmlSAXHandler()
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = { ctx, localName, _, _, _, _, attributeCount, _, attributes in
            guard let ctx, let localName else { return }
            let parser = Unmanaged<XMLStreamParser>.fromOpaque(ctx).takeUnretainedValue()
            parser.start(localName, attributes, Int(attributeCount))
        }
        handler.endElementNs = { ctx, localName, _, _ in
            guard let ctx, let localName else { return }
            Unmanaged<XMLStreamParser>.fromOpaque(ctx).takeUnretainedValue().end(localName)
        }
        // Errors are read from the context after a failed chunk; nothing is printed.
        handler.serror = { _, _ in }
        guard let context = xmlCreatePushParserCtxt(&handler, nil, nil, 0, nil) else {
            throw CohortError(.system, "libxml2 could not start an XML parser", at: .init(file: name))
        }
        self.context = context
        context.pointee.userData = Unmanaged.passUnretained(self).toOpaque()
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue)
        xmlCtxtUseOptions(context, options)
    }

    deinit {
        if let context { xmlFreeParserCtxt(context) }
    }

    private var line: Int { context.map { Int(xmlSAX2GetLineNumber($0)) } ?? 0 }

    private func start(_ localName: UnsafePointer<xmlChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, _ count: Int) {
        guard handlerError == nil else { return }
        let element = XMLElementStart(name: UnsafeBufferPointer(start: localName, count: strlen(localName)), attributes: attributes, count: count, line: line)
        do { try onStart(element) } catch { stop(error) }
    }

    private func end(_ localName: UnsafePointer<xmlChar>) {
        guard handlerError == nil else { return }
        do { try onEnd(UnsafeBufferPointer(start: localName, count: strlen(localName))) } catch { stop(error) }
    }

    private func stop(_ error: any Error) {
        handlerError = error
        if let context { xmlStopParser(context) }
    }

    /// Parses the next bytes of the document.
    package func feed(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        // xmlParseChunk takes an Int32 length.
        while offset < bytes.count {
            let n = min(bytes.count - offset, 1 << 30)
            try parse(bytes.baseAddress.map { $0 + offset }, n, terminate: false)
            offset += n
        }
    }

    /// Ends the document: a document cut short is an error here.
    public func finish() throws { try parse(nil, 0, terminate: true) }

    private func parse(_ pointer: UnsafeRawPointer?, _ count: Int, terminate: Bool) throws {
        guard let context else { return }
        let status = xmlParseChunk(context, pointer?.assumingMemoryBound(to: CChar.self), Int32(count), terminate ? 1 : 0)
        if let handlerError { throw handlerError }
        guard status == 0, context.pointee.wellFormed != 0 else {
            var line = self.line
            var column = 0
            var code = Int(status)
            if let error = xmlCtxtGetLastError(context) {
                line = Int(error.pointee.line)
                column = Int(error.pointee.int2)
                code = Int(error.pointee.code)
            }
            throw CohortError.invalid(
                "the XML is not well-formed at column \(column) (libxml2 error \(code)\(terminate ? ", the document ends early" : ""))",
                file: name, line: line, hint: "the file is damaged or cut short: export it again from the Health app")
        }
    }
}
