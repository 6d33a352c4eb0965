// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid names: duplicate or empty input and output names, two graphs with the same name.

pdg.graph @duplicate_input {
  pdg.dim @t < 8
  // expected-note @+1 {{first input named 'a' is here}}
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'pdg.input' op input name 'a' is already used}}
  %b = pdg.input "a" : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @duplicate_output {
  %a = pdg.input "a" : !pdg.value<[], tensor<f32>>
  // expected-note @+1 {{first output named 'o' is here}}
  pdg.output "o" %a : !pdg.value<[], tensor<f32>>
  // expected-error @+1 {{'pdg.output' op output name 'o' is already used}}
  pdg.output "o" %a : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @empty_input_name {
  // expected-error @+1 {{a program input needs a non-empty name}}
  %x = pdg.input "" : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @empty_output_name {
  %x = pdg.input "x" : !pdg.value<[], tensor<f32>>
  // expected-error @+1 {{a program output needs a non-empty name}}
  pdg.output "" %x : !pdg.value<[], tensor<f32>>
}

// -----

// expected-note @+1 {{see existing symbol definition here}}
pdg.graph @same_name {
}
// expected-error @+1 {{redefinition of symbol named 'same_name'}}
pdg.graph @same_name {
}
