package ratarmount

// SchemaEntry is one object of the index's schema, as sqlite_master lists
// it (the automatic indexes of primary keys and UNIQUE columns aside).
type SchemaEntry struct {
	Type  string // "table", "view" or "trigger"
	Name  string
	Table string // sqlite_master's tbl_name
	SQL   string // the statement as SQLite stores it
}

// Schema is the schema of an index, in the order in which ratarmount's
// index ends up listing it in sqlite_master: the tables, then the xattrs
// view and its trigger (ratarmount creates the view before the metadata
// tables, but the VACUUM that finishes its index moves views and triggers
// after the tables). Each statement is the text SQLite stores for the
// CREATE statement ratarmount runs: "IF NOT EXISTS" and the final ";"
// dropped, everything else, comments included, kept. Executing these very
// strings stores the same text, so that sqlite_master matches to the byte;
// WriteTo stores them as they are.
//
// The text is the file format's, not ours to choose: these comments are in
// every index ratarmount writes, and ratarmount finds its tables by name.
var Schema = []SchemaEntry{
	{Type: "table", Name: "files", Table: "files", SQL: `CREATE TABLE "files" (
    "path"           VARCHAR(65535) NOT NULL,  /* path with leading and without trailing slash */
    "name"           VARCHAR(65535) NOT NULL,
    "offsetheader"   INTEGER,  /* seek offset from TAR file where the TAR metadata for this file resides */
    "offset"         INTEGER,  /* seek offset from TAR file where these file's contents resides */
    "size"           INTEGER,
    "mtime"          REAL,
    "mode"           INTEGER,
    "type"           INTEGER,
    "linkname"       VARCHAR(65535),
    "uid"            INTEGER,
    "gid"            INTEGER,
    /* True for valid TAR files. Internally used to determine where to mount recursive TAR files. */
    "istar"          BOOL   ,
    "issparse"       BOOL   ,  /* For sparse files the file size refers to the expanded size! */
    "isgenerated"    BOOL   ,  /* True for entries generated for parent folders by ratarmount. */
    "recursiondepth" INTEGER,  /* Normally 0. 1+ if the file is recursively in an archive. */
    /* See SQL benchmarks for decision on the primary key.
     * See also https://www.sqlite.org/optoverview.html
     * (path,name) tuples might appear multiple times in a TAR if it got updated.
     * In order to also be able to show older versions, we need to add
     * the offsetheader column to the primary key. */
    PRIMARY KEY ("path","name","offsetheader")
)`},
	{Type: "table", Name: "xattrkeys", Table: "xattrkeys", SQL: `CREATE TABLE "xattrkeys" (
    "id" INTEGER PRIMARY KEY,
    "name" VARCHAR(65535) UNIQUE
)`},
	{Type: "table", Name: "xattrsdata", Table: "xattrsdata", SQL: `CREATE TABLE "xattrsdata" (
    "offsetheader" INTEGER,
    "keyid" INTEGER,
    "value" VARCHAR(65535),  /* Binary Data (Python Bytes) */
    PRIMARY KEY ("offsetheader","keyid"),
    FOREIGN KEY ("keyid") REFERENCES xattrkeys("id")
)`},
	{Type: "table", Name: "metadata", Table: "metadata", SQL: `CREATE TABLE "metadata" (
    "key"      VARCHAR(65535) NOT NULL, /* e.g. "tarsize" */
    "value"    VARCHAR(65535) NOT NULL, /* e.g. size in bytes as integer */
    PRIMARY KEY ("key")
)`},
	{Type: "table", Name: "versions", Table: "versions", SQL: `CREATE TABLE "versions" (
    "name"     VARCHAR(65535) NOT NULL, /* which component the version belongs to */
    "version"  VARCHAR(65535) NOT NULL, /* free form version string */
    /* Semantic Versioning 2.0.0 (semver.org) parts if they can be specified:
     *   MAJOR version when you make incompatible API changes,
     *   MINOR version when you add functionality in a backwards compatible manner, and
     *   PATCH version when you make backwards compatible bug fixes. */
    "major"    INTEGER,
    "minor"    INTEGER,
    "patch"    INTEGER,
    PRIMARY KEY ("name")
)`},
	{Type: "view", Name: "xattrs", Table: "xattrs", SQL: `CREATE VIEW "xattrs" ( "offsetheader", "key", "value" ) AS
    SELECT offsetheader, xattrkeys.name, value FROM "xattrsdata"
    INNER JOIN xattrkeys ON xattrkeys.id = xattrsdata.keyid`},
	{Type: "trigger", Name: "xattrs_insert", Table: "xattrs", SQL: `CREATE TRIGGER "xattrs_insert" INSTEAD OF INSERT ON "xattrs"
BEGIN
    INSERT OR IGNORE INTO xattrkeys(name) VALUES (NEW.key);
    INSERT OR REPLACE INTO xattrsdata(offsetheader, keyid, value) VALUES (
        NEW.offsetheader,
        (SELECT xattrkeys.id FROM xattrkeys WHERE name = NEW.key),
        NEW.value
    );
END`},
}

// tableKeys says, for each table of Schema, what SQLite itself makes of
// its key constraints when it runs the CREATE TABLE statement, and what a
// writer of the file's pages (sqlitefile, which does not read column
// definitions) must therefore declare: the INTEGER PRIMARY KEY column that
// is the rowid (rowid, -1 for none), and the automatic index of each other
// PRIMARY KEY or UNIQUE constraint, sqlite_autoindex_<table>_<N>, over
// those columns (0-based), in the order of the constraints in the
// statement. TestTableKeys checks them against SQLite's own reading of
// Schema.
var tableKeys = map[string]struct {
	rowid  int
	unique [][]int
}{
	// PRIMARY KEY ("path","name","offsetheader")
	TableFiles: {rowid: -1, unique: [][]int{{0, 1, 2}}},
	// "id" INTEGER PRIMARY KEY is the rowid; "name" VARCHAR(65535) UNIQUE
	TableXattrKeys: {rowid: 0, unique: [][]int{{1}}},
	// PRIMARY KEY ("offsetheader","keyid"); the FOREIGN KEY makes no index
	TableXattrsData: {rowid: -1, unique: [][]int{{0, 1}}},
	// PRIMARY KEY ("key"), a VARCHAR: not the rowid
	TableMetadata: {rowid: -1, unique: [][]int{{0}}},
	// PRIMARY KEY ("name"), a VARCHAR: not the rowid
	TableVersions: {rowid: -1, unique: [][]int{{0}}},
}

// Table names. Each table's columns, in the order rows give them, are in
// columns.
const (
	TableFiles      = "files"
	TableXattrKeys  = "xattrkeys"
	TableXattrsData = "xattrsdata"
	TableMetadata   = "metadata"
	TableVersions   = "versions"
)

// columns lists each table's columns in their order.
var columns = map[string][]string{
	TableFiles: {"path", "name", "offsetheader", "offset", "size", "mtime", "mode", "type", "linkname",
		"uid", "gid", "istar", "issparse", "isgenerated", "recursiondepth"},
	TableXattrKeys:  {"id", "name"},
	TableXattrsData: {"offsetheader", "keyid", "value"},
	TableMetadata:   {"key", "value"},
	TableVersions:   {"name", "version", "major", "minor", "patch"},
}

// tableOrder is the order in which tables receives rows: files first, as
// ratarmount inserts them, the version and metadata rows last.
var tableOrder = []string{TableFiles, TableXattrKeys, TableXattrsData, TableVersions, TableMetadata}
