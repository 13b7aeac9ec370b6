#!/usr/bin/env cwl-runner
# A tiny CWL workflow (tests/e2e/test_live_nextflow_cwl.sh): sort the lines
# of a file numerically, then count them. Two steps, each a CommandLineTool
# that cwltool runs as its own child process (--no-container: the tools of
# the host, sort and wc from coreutils).
cwlVersion: v1.2
class: Workflow
inputs:
  infile: File
outputs:
  counted:
    type: File
    outputSource: count/out
steps:
  sort:
    run:
      class: CommandLineTool
      baseCommand: [sort, -n]
      inputs:
        in: {type: File, inputBinding: {position: 1}}
      outputs:
        out: {type: stdout}
      stdout: sorted.txt
    in: {in: infile}
    out: [out]
  count:
    run:
      class: CommandLineTool
      baseCommand: [wc, -l]
      inputs:
        in: {type: File, inputBinding: {position: 1}}
      outputs:
        out: {type: stdout}
      stdout: count.txt
    in: {in: sort/out}
    out: [out]
