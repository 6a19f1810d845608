// A test SQLite VFS that can show what a power loss would leave on disk
// (docs/reliability.md D3), as SQLite's own crash tests do: it passes everything to
// the default VFS and, for files under a watched folder, remembers what each
// write since the file's last xSync overwrote. `powerloss_snapshot` copies the
// watched files elsewhere and undoes, in the copies, every write not yet
// synced: the state a machine that lost power now would boot with.
#ifndef POWERLOSS_H
#define POWERLOSS_H

/// Registers the VFS as the process's default (once); 0 on success.
int powerloss_install(void);

/// Watches files whose paths start with `folder` (one folder at a time; NULL stops).
void powerloss_watch(const char *folder);

/// Copies each watched database and WAL file into `destination` (an existing
/// folder) with its unsynced writes undone; while it copies, no write or sync
/// of a watched file can run. Returns the number of writes undone, or -1.
long powerloss_snapshot(const char *destination);

/// Files whose paths start with `folder` refuse writes with SQLITE_FULL, as
/// on a full disk, until `powerloss_room(folder)` (independent of
/// `powerloss_watch`; up to 16 folders at once, for tests running together).
void powerloss_full(const char *folder);
void powerloss_room(const char *folder);

#endif
