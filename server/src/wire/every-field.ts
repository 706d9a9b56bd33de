/** Every field of a message type, optional ones too: a literal checked against it names them all. */
export type EveryField<M> = Record<Exclude<keyof M, "$unknown">, unknown>;
