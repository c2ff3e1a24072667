// aws-local-stepfunctions@3 calls Promise.withResolvers (Node >= 22) in every Task state; Node 20 lacks it,
// and without this every Task fails with a TypeError that the state machine's Catch then swallows.
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}
const promiseCtor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof promiseCtor.withResolvers !== 'function') {
  promiseCtor.withResolvers = <T>(): Resolvers<T> => {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
