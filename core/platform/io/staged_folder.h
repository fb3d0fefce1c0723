#pragma once
// A folder replaced whole, in one step: the new contents are written into a staging folder beside
// it ("<parent>/.<name>.staging.<host>.<pid>"), which then takes the folder's place with a single
// renameat2(RENAME_EXCHANGE) (or a plain rename when there was no folder yet); the old contents,
// now under the staging name, are deleted last. Whatever the moment a writer is killed, readers of
// the folder find the old contents whole or the new contents whole, in the layout they expect,
// never a mix: a kill before the exchange leaves the old folder untouched and a staging folder
// beside it; one after it leaves the new folder and the old contents under the staging name. Both
// leftovers are removed by the next StagedFolder of the same folder on this machine (their pid no
// longer runs). The data-set generators write through it (data/generators).
#include <string>

namespace tn {

class StagedFolder {
 public:
  /// Makes an empty staging folder beside `dir` (beside the folder it leads to, when `dir` is a
  /// symbolic link to one, so the link is kept), creating dir's parents when missing, after removing
  /// the staging folders that killed writers of this machine left there. Throws IoError naming the
  /// folder when it cannot be made (the parent must be writable).
  explicit StagedFolder(const std::string& dir);
  /// Removes the staging folder when commit() was not reached (a failure or a stop): the folder
  /// itself is left as it was.
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  /// Where to write the new contents.
  const std::string& path() const { return staging_; }
  /// The folder that commit() replaces (dir, or the folder its link leads to).
  const std::string& target() const { return target_; }
  /// Puts the staging folder in the target's place in one rename (exchanged with the old folder,
  /// or renamed to the target's name when there is none), syncs the parent folder, then deletes
  /// the old contents. Throws IoError when the rename fails (the old folder is then untouched; on a
  /// file system without RENAME_EXCHANGE it is moved aside first and put back on failure).
  void commit();

 private:
  std::string target_;   // the folder replaced
  std::string staging_;  // the staging folder beside it
  bool committed_ = false;
};

}  // namespace tn
