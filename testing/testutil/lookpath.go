package testutil

import "os/exec"

var execLookPath = exec.LookPath
