// The pdg.schedule attribute that pdg-schedule writes and the lowering
// reads: its fields are checked where it is parsed, so a hand-written or
// damaged schedule is an error at its op, never a crash of the lowering.
// RUN: pdg-opt %s --split-input-file --verify-diagnostics

pdg.graph @phase {
  pdg.dim @t < 4
  // expected-error @+1 {{'pdg.schedule' needs phase = "before", "loop" or "after"}}
  %x = pdg.input "x" {pdg.schedule = {phase = "never", loops = [], order = 0 : i64, stage = 0 : i64}} : !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @loops {
  pdg.dim @t < 4
  // expected-error @+1 {{'pdg.schedule' loops must be dim names (strings)}}
  %x = pdg.input "x" {pdg.schedule = {phase = "loop", loops = [1], order = 0 : i64, stage = 0 : i64}} : !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @group {
  pdg.dim @t < 4
  // expected-error @+1 {{'pdg.schedule' group must be an integer}}
  %x = pdg.input "x" {pdg.schedule = {group = "one", phase = "loop", loops = ["t"], order = 0 : i64, stage = 0 : i64}} : !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @nest {
  pdg.dim @t < 4
  // expected-error @+1 {{'pdg.schedule' nest must be an array of integers}}
  %x = pdg.input "x" {pdg.schedule = {group = 1 : i64, phase = "loop", loops = ["t"], nest = ["t"], order = 0 : i64, stage = 0 : i64}} : !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @reverse {
  pdg.dim @t < 4
  // expected-error @+1 {{'pdg.schedule' reverse must name loops of the value}}
  %x = pdg.input "x" {pdg.schedule = {group = 1 : i64, phase = "loop", loops = ["t"], order = 0 : i64, reverse = ["i"], stage = 0 : i64}} : !pdg.value<[t], tensor<f32>>
}

// -----

// Both forms of reverse are accepted: the innermost loop (unit) or named.
pdg.graph @valid {
  pdg.dim @i < 2
  pdg.dim @t < 4
  %x = pdg.input "x" {pdg.schedule = {group = 1 : i64, phase = "loop", loops = ["i", "t"], nest = [1], order = 0 : i64, reverse = ["t"], stage = 0 : i64}} : !pdg.value<[i, t], tensor<f32>>
  %y = pdg.input "y" {pdg.schedule = {group = 3 : i64, phase = "loop", loops = ["t"], order = 1 : i64, reverse, stage = 0 : i64}} : !pdg.value<[t], tensor<f32>>
}
