// A record without its absent fields, typed for `exactOptionalPropertyTypes`: for the few places that
// must not carry a key whose value is undefined (a count of keys, `in`, a spread over set values).

/** `T` with each field that may be undefined made optional and never undefined. */
export type Present<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** The fields of `o` that hold a value (undefined ones left out), in their order. */
export function present<T extends object>(o: T): Present<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Present<T>;
}
