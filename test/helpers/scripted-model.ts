// The scripted OpenAI-compatible model server lives with the devtools (the demo runs on it too).
export * from '../../src/devtools/scripted-model';
