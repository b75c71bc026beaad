// Results of several tensors, as torch's named tuples.
//
// NOTE [ Named results ]
// torch's multi-result ops (topk, sort, svd, ...) return named tuples
// (torch.return_types.topk): they destructure by position
// (`values, indices = torch.topk(x, 2)`) and read by name (`r.values`). Here
// they are the same thing in JS: a frozen array of the results in torch's
// order, each name a non-enumerable property of it, so that
// `const [v, i] = gx.topk(x, 2)` and `const { values, indices } = ...` both
// work and both are typed exactly. Non-enumerable, so that whatever walks a
// result (gx.tidy, Object.values, JSON.stringify, util.inspect) sees each
// tensor once, as the tuple's items.

/** The tuple T with the names of F: `r[0]` is `r.values`, and so on. */
export type Named<F extends object, T extends readonly unknown[]> = Readonly<F> & Readonly<T>;

/** The tuple of F's members in the order K names them. */
export type TupleOf<F, K extends readonly (keyof F)[]> = { -readonly [I in keyof K]: F[K[I]] };

/**
 * @internal `fields` as a named result in the order `order` lists them
 * (NOTE [ Named results ]).
 */
export function named<F extends object, const K extends readonly (keyof F)[]>(fields: F, order: K): Named<F, TupleOf<F, K>> {
  const items: unknown[] = order.map((k) => fields[k]);
  for (const k of order) Object.defineProperty(items, k, { value: fields[k], enumerable: false });
  return Object.freeze(items) as Named<F, TupleOf<F, K>>;
}
