// asl-validator@4 ships no type declarations. It mutates its input: pass a structuredClone.
declare module 'asl-validator' {
  interface AslValidationResult {
    isValid: boolean;
    errors: Array<Record<string, unknown>>;
    errorsText(separator?: string): string;
  }
  export default function aslValidator(definition: unknown, options?: { checkPaths?: boolean; checkArn?: boolean }): AslValidationResult;
}
