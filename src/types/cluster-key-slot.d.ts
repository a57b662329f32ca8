// The package ships no types: its two public functions, as its README documents them.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0–16383) of a key, honouring a `{hash tag}`. */
  function generate(key: string | Buffer): number;
  namespace generate {
    /** The slot all `keys` share, or -1 when they do not share one. */
    function generateMulti(keys: Array<string | Buffer>): number;
  }
  export = generate;
}
