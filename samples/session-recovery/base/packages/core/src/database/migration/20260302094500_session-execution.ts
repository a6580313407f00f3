export default {
  name: "20260302094500_session-execution",
  statements: [
    `CREATE TABLE \`session_execution\` (
	\`id\` text PRIMARY KEY NOT NULL,
	\`session_id\` text NOT NULL,
	\`owner_id\` text NOT NULL,
	\`phase\` text NOT NULL,
	\`assistant_message_id\` text,
	\`expires_at\` integer NOT NULL,
	\`wake_attempts\` integer DEFAULT 0 NOT NULL,
	\`recovery_error\` text,
	\`time_created\` integer NOT NULL,
	CONSTRAINT \`fk_session_execution_session_id_session_id_fk\` FOREIGN KEY (\`session_id\`) REFERENCES \`session\`(\`id\`) ON DELETE CASCADE
)`,
    `CREATE UNIQUE INDEX \`session_execution_session_id_idx\` ON \`session_execution\` (\`session_id\`)`,
    `CREATE INDEX \`session_execution_expires_attempts_idx\` ON \`session_execution\` (\`expires_at\`,\`wake_attempts\`,\`time_created\`)`,
    `CREATE TABLE \`session_input\` (
	\`id\` text PRIMARY KEY NOT NULL,
	\`session_id\` text NOT NULL,
	\`delivery\` text NOT NULL,
	\`promoted_seq\` integer,
	\`wake_pending\` integer DEFAULT false NOT NULL,
	\`wake_attempts\` integer DEFAULT 0 NOT NULL,
	\`time_created\` integer NOT NULL,
	CONSTRAINT \`fk_session_input_session_id_session_id_fk\` FOREIGN KEY (\`session_id\`) REFERENCES \`session\`(\`id\`) ON DELETE CASCADE
)`,
    `CREATE INDEX \`session_input_session_id_idx\` ON \`session_input\` (\`session_id\`,\`time_created\`)`,
    `CREATE INDEX \`session_input_wake_idx\` ON \`session_input\` (\`wake_pending\`,\`wake_attempts\`,\`time_created\`)`,
  ],
}
