import CSQLite
import Foundation

/// A SQLite failure: the result code and SQLite's own message.
public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { "\(message) (sqlite code \(code))" }

    /// The primary result code (SQLITE_FULL, SQLITE_CORRUPT, ...).
    public var primaryCode: Int32 { code & 0xFF }
}

/// One SQLite connection. Not thread-safe: use it from one thread at a time.
final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    let path: String

    /// `vfs`: SQLite's name of the OS layer to use (nil: the default).
    /// `create`: make the file when it is missing (else opening it fails).
    init(path: String, vfs: String? = nil, create: Bool = true) throws(SQLiteError) {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &db, flags, vfs)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw SQLiteError(code: code, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 2000)
    }

    deinit { close() }

    func close() {
        guard let handle else { return }
        for statement in transactionStatements.values { statement.finalize() }
        transactionStatements = [:]
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// BEGIN, COMMIT and ROLLBACK, prepared once: a commit runs them many times a second.
    private var transactionStatements: [String: SQLiteStatement] = [:]

    private func runTransactionStatement(_ sql: String) throws(SQLiteError) {
        if let statement = transactionStatements[sql] { return try statement.run() }
        let statement = try prepare(sql)
        transactionStatements[sql] = statement
        try statement.run()
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int32 { sqlite3_changes(handle) }

    /// Runs SQL that returns no rows (several statements allowed).
    func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &error)
        if code != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw SQLiteError(code: code, message: message)
        }
    }

    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil))
        return SQLiteStatement(statement!, database: self)
    }

    /// Turns a SQLite result code into a thrown error.
    func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE else {
            throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// `immediate` takes the write lock at the start (for writers); otherwise the
    /// transaction reads one snapshot of the database from its first read on.
    func transaction<Result>(immediate: Bool, _ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try runTransactionStatement(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do throws(SQLiteError) {
            let result = try body()
            try runTransactionStatement("COMMIT")
            return result
        } catch {
            try? runTransactionStatement("ROLLBACK")
            throw error
        }
    }

    /// The first column of the first row, as text.
    func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }
}

/// A prepared statement, reset after each use and finalized on deinit.
final class SQLiteStatement {
    private var statement: OpaquePointer?
    private unowned let database: SQLiteDatabase

    init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { finalize() }

    /// Releases the statement; the database cannot fully close while one lives.
    func finalize() {
        sqlite3_finalize(statement)
        statement = nil
    }

    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func bind(_ index: Int32, _ text: String) throws(SQLiteError) {
        try database.check(happy_sqlite_bind_text(statement, index, text, -1))
    }

    func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        try database.check(sqlite3_bind_int64(statement, index, value))
    }

    func bind(_ index: Int32, blob: [UInt8]) throws(SQLiteError) {
        let code = blob.withUnsafeBytes { happy_sqlite_bind_blob(statement, index, $0.baseAddress, Int32($0.count)) }
        try database.check(code)
    }

    /// Advances; true while there is a row.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(statement)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(database.handle)))
    }

    /// Runs a statement that returns no rows, then resets it.
    func run() throws(SQLiteError) {
        defer { reset() }
        _ = try step()
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: pointer)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
