/**
 * A ConnectRouter that registers a service one method at a time, each through its own
 * rpc(): the base of the routers that act per method (json-bytes.ts sets a method's JSON
 * options, connect-unary.ts keeps each unary method's implementation).
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createServiceImplSpec, type MethodImpl, type ServiceImpl } from "@connectrpc/connect";
import type { UniversalHandlerOptions } from "@connectrpc/connect/protocol";

export abstract class MethodRouter implements ConnectRouter {
  constructor(protected readonly inner: ConnectRouter) {}

  get handlers() {
    return this.inner.handlers;
  }

  service<T extends DescService>(
    service: T,
    implementation: Partial<ServiceImpl<T>>,
    options?: Partial<UniversalHandlerOptions>,
  ): this {
    for (const spec of Object.values(createServiceImplSpec(service, implementation).methods))
      this.rpc(spec.method, spec.impl as MethodImpl<DescMethod>, options);
    return this;
  }

  abstract rpc<M extends DescMethod>(method: M, impl: MethodImpl<M>, options?: Partial<UniversalHandlerOptions>): this;
}
