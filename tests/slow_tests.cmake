# Read by ctest after the discovered tests (CMakeLists.txt adds it to TEST_INCLUDE_FILES): the
# doctest cases that take over about 10 s on 2 cores get the label slow beside their binary's
# (`ctest -LE slow` then runs everything else in a few minutes). A name that no longer matches a
# test is said, so a renamed test cannot drop out of the list unnoticed.
set(tn_slow_tests
  "test_app|cli: masked-LM pretraining trains, resumes bit for bit, and a fine-tune starts from it"
  "test_app|cli: a run records its command, overrides, version, host, threads and times, and train.log keeps its log"
  "test_app|cli: the best checkpoint and early stopping follow the validation metric, and survive a resume"
  "test_app|cli: train writes the run directory, the loss falls, eval reproduces the test loss"
  "test_app|cli: precision bf16 trains to the f32 run's test loss within 2 %, and resumes exactly"
  "test_app|cli: --resume continues a run exactly: 15 + 15 steps equal 30 in one go"
  "test_app|cli: LRA Pathfinder and Image as pixel sequences train, resume bit for bit and predict"
  "test_app|cli sweep: a killed child and a stopped sweep resume to the numbers of an uninterrupted run"
  "test_app|package: cpack builds a .deb with its runtime dependencies, and its binary runs with the installed configs"
  "test_app|cli: SIGTERM finishes the step, saves, exits 143, and --resume then equals an uninterrupted run"
  "test_mpi|cli mpi: SIGTERM to one rank stops both at one step, and the run resumes in one process"
  "test_slurm|sweep on Slurm: --detach leaves the tasks queued, a rerun follows them, SIGTERM stops them with checkpoints, the next rerun resumes"
)
foreach(entry IN LISTS tn_slow_tests)
  string(FIND "${entry}" "|" bar)
  string(SUBSTRING "${entry}" 0 ${bar} binary)
  math(EXPR start "${bar} + 1")
  string(SUBSTRING "${entry}" ${start} -1 test)
  set(label cli)
  if(binary STREQUAL "test_mpi")
    set(label mpi)
  elseif(binary STREQUAL "test_slurm")
    set(label slurm)
  endif()
  if(NOT DEFINED ${binary}_TESTS)  # that binary is not built here (e.g. the sanitizer build)
    continue()
  endif()
  list(FIND ${binary}_TESTS "${test}" found)
  if(found GREATER -1)
    set_tests_properties("${test}" PROPERTIES LABELS "${label};slow")
  else()
    message(WARNING "tests/slow_tests.cmake: no test named \"${test}\" in ${binary}")
  endif()
endforeach()
