const TRUE_VALUES = new Set(['1', 'true', 'on', 'yes']);
const FALSE_VALUES = new Set(['0', 'false', 'off', 'no']);

/** A flag is on when `TOOLGATE_FEATURE_<NAME>` says so, else when config says so; env wins so operators can flip one without editing files. */
export function createFeatureGate(flags: Record<string, boolean>, env: NodeJS.ProcessEnv): (feature: string | undefined) => boolean {
  return (feature) => {
    if (!feature) return true;
    const fromEnv = env[`TOOLGATE_FEATURE_${feature.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}`]?.toLowerCase();
    if (fromEnv !== undefined && TRUE_VALUES.has(fromEnv)) return true;
    if (fromEnv !== undefined && FALSE_VALUES.has(fromEnv)) return false;
    return flags[feature] === true;
  };
}
