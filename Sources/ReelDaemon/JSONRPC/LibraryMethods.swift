// library.* — the tree of folders and recordings.

import ReelCore
import ReelModel
import ReelProtocol

extension Params {
    /// An item given as `idKey` (uuid) or `pathKey` (tree path); nil when neither is given.
    func optionalItem(id idKey: String = "item", path pathKey: String = "path") throws(RPCError) -> ItemReference? {
        let id = try optionalString(idKey)
        let path = try optionalString(pathKey)
        switch (id, path) {
        case (let id?, nil): return .id(id)
        case (nil, let path?):
            guard path.hasPrefix("/") else {
                throw RPCError.invalidParams("\"\(pathKey)\" must be a tree path starting with \"/\", not \"\(path)\"")
            }
            return .path(path)
        case (nil, nil): return nil
        case (_?, _?): throw RPCError.invalidParams("give \"\(idKey)\" or \"\(pathKey)\", not both")
        }
    }

    /// An item that must be given.
    func requiredItem(id idKey: String = "item", path pathKey: String = "path") throws(RPCError) -> ItemReference {
        guard let reference = try optionalItem(id: idKey, path: pathKey) else {
            throw RPCError.invalidParams("\(method) needs \"\(idKey)\" (an id) or \"\(pathKey)\" (a tree path)")
        }
        return reference
    }
}

/// Decodes parameters and encodes results. Reads run on the library's read queue (a search over
/// a large tree never stalls the event loop), writes on its write queue; the rules (names, media
/// roots, what may be imported) are the core's.
enum LibraryMethods {
    static func register(into table: inout MethodTable, library: LibraryController) {
        table.register("library.list") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["item", "path"])
            let folder = try call.params.optionalItem() ?? .root
            return .replying({ reply in library.list(folder: folder, reply: reply) }) { listing in
                ["folder": listing.folder.json, "items": .array(listing.items.map(\.json))]
            }
        }
        table.register("library.get") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["item", "path"])
            let reference = try call.params.requiredItem()
            return .replying({ reply in library.item(reference, reply: reply) }, \.json)
        }
        table.register("library.createFolder") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["parent", "parentPath", "name"])
            let parent = try params.optionalItem(id: "parent", path: "parentPath") ?? .root
            let name = try params.requiredString("name")
            return .replying({ reply in library.createFolder(parent: parent, name: name, reply: reply) }, \.json)
        }
        table.register("library.rename") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["item", "path", "name"])
            let reference = try params.requiredItem()
            let name = try params.requiredString("name")
            return .replying({ reply in library.rename(reference, to: name, reply: reply) }, \.json)
        }
        table.register("library.move") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["item", "path", "to", "toPath"])
            let reference = try params.requiredItem()
            guard let destination = try params.optionalItem(id: "to", path: "toPath") else {
                throw RPCError.invalidParams("library.move needs \"to\" (a folder id) or \"toPath\" (a folder path)")
            }
            return .replying({ reply in library.move(reference, to: destination, reply: reply) }, \.json)
        }
        table.register("library.delete") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["item", "path"])
            let reference = try call.params.requiredItem()
            return .replying({ reply in library.delete(reference, reply: reply) }) { count in
                .object(["deleted": .int(Int64(count))])
            }
        }
        table.register("library.search") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["query", "limit", "cursor"])
            let query = try params.requiredString("query")
            let limit = try params.optionalInt("limit") ?? LibraryController.defaultSearchLimit
            guard (1...LibraryController.maximumSearchLimit).contains(limit) else {
                throw RPCError.invalidParams("\"limit\" must be from 1 to \(LibraryController.maximumSearchLimit), not \(limit)")
            }
            let cursor = try params.optionalString("cursor")
            return .replying({ reply in library.search(query: query, limit: limit, cursor: cursor, reply: reply) }) { page in
                [
                    "items": .array(page.items.map(\.json)),
                    "nextCursor": page.nextCursor.map(JSONValue.string) ?? .null,
                ]
            }
        }
        table.register("library.import") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["file", "folder", "folderPath", "item", "path", "name"])
            let file = try params.requiredString("file")
            guard file.hasPrefix("/") else {
                throw RPCError.invalidParams("\"file\" must be an absolute path, not \"\(file)\"")
            }
            var folder = try params.optionalItem(id: "folder", path: "folderPath")
            if folder == nil { folder = try params.optionalItem() }
            let destination = folder ?? .root
            let name = try params.optionalString("name")
            return .replying({ reply in library.importFile(path: file, folder: destination, name: name, reply: reply) }, \.json)
        }
    }
}
