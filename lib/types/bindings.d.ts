// The `bindings` package ships no types: it takes an addon name and returns its exports.
declare module 'bindings' {
  function bindings(name: string): unknown;
  export = bindings;
}
