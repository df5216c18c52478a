// Everything here must stay importable from Temporal workflow code: no Node built-ins, no I/O.
export * from './limits';
export * from './traceparent';
export * from './handoff';
export * from './artifacts';
export * from './job';
