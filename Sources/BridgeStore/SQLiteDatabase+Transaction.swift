import CSQLite

extension SQLiteDatabase {
    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; rolls back and rethrows when `body` throws.
    ///
    /// IMMEDIATE takes the write lock at the start, so waiting for another writer happens here (bounded by
    /// the busy timeout) instead of failing at the first write or at COMMIT. Transactions do not nest.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        precondition(!isInTransaction, "SQLiteDatabase.transaction does not nest")
        try execute("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try body()
        } catch {
            rollbackIfOpen()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackIfOpen()  // a failed COMMIT (SQLITE_FULL, I/O error) may leave the transaction open
            throw error
        }
        return result
    }

    private func rollbackIfOpen() {
        // Some errors (SQLITE_FULL among them) roll the transaction back on their own.
        if isInTransaction { try? execute("ROLLBACK") }
    }

    // MARK: - Schema version

    /// `PRAGMA user_version`: the schema version stored in the file header (0 for a new file).
    public func userVersion() throws -> Int {
        Int(try pragmaText("PRAGMA user_version")) ?? 0
    }

    /// Sets `PRAGMA user_version`.
    public func setUserVersion(_ version: Int) throws {
        try execute("PRAGMA user_version=\(version)")
    }

    /// Applies, in order, every migration whose version is above the file's `user_version`, each in its own
    /// transaction together with the version bump; returns the versions applied.
    ///
    /// The version is re-read inside each write transaction, so two processes migrating the same file at
    /// once apply each migration exactly once.
    @discardableResult
    public func migrate(_ migrations: [SQLiteMigration]) throws -> [Int] {
        var previous = 0
        for migration in migrations {
            precondition(migration.version > previous, "migration versions must start at 1 and increase")
            previous = migration.version
        }
        var applied: [Int] = []
        for migration in migrations {
            let didApply = try transaction { () throws -> Bool in
                guard migration.version > (try userVersion()) else { return false }
                try execute(migration.sql)
                try setUserVersion(migration.version)
                return true
            }
            if didApply { applied.append(migration.version) }
        }
        return applied
    }
}
